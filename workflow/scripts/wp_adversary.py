from attnexp.analyses.wp.settings import WPSettings
from attnexp.models.settings import TrainSettings
from attnexp.pipeline.wp import run_wp_adversary
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_wp_adversary(
        instances=snakemake.input.instances,
        meta=snakemake.input.meta,
        dataset=snakemake.wildcards.dataset,
        lam=float(snakemake.wildcards.lam),
        settings=WPSettings.from_config(snakemake.params.config),
        train=TrainSettings.from_config(
            snakemake.params.config,
            seed=int(snakemake.wildcards.seed),
            hyperparameters=snakemake.params.hyperparameters,
            paper="wp",
        ),
        hyperparameters=dict(snakemake.params.hyperparameters),
        model_options=dict(snakemake.params.config["model"]),
        base_files=dict(snakemake.params.base),
        outputs=dict(snakemake.output.items()),
        embeddings=dict(snakemake.params.embeddings),
        threads=snakemake.threads,
    )
