from attnexp.analyses.wp.runs import run_wp_adversary
from attnexp.analyses.wp.settings import WPSettings
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_wp_adversary(
        instances=snakemake.input.instances,
        meta=snakemake.input.meta,
        dataset=snakemake.wildcards.dataset,
        seed=int(snakemake.wildcards.seed),
        lam=float(snakemake.wildcards.lam),
        settings=WPSettings.from_config(snakemake.params.config),
        hyperparameters=dict(snakemake.params.hyperparameters),
        model_options=dict(snakemake.params.config["model"]),
        deterministic=snakemake.params.config["seeding"]["deterministic"],
        base_files=dict(snakemake.params.base),
        outputs=dict(snakemake.output.items()),
        embeddings=dict(snakemake.params.embeddings),
        threads=snakemake.threads,
        device=snakemake.params.config["device"],
        compute={key: snakemake.params.config[key] for key in ("padded_lstm", "fused_adam")},
    )
