from attnexp.models.settings import HFSettings
from attnexp.pipeline.hf import run_hf_model
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_hf_model(
        instances=snakemake.input.instances,
        meta=snakemake.input.meta,
        dataset=snakemake.wildcards.dataset,
        settings=HFSettings.from_config(snakemake.params.config, snakemake.wildcards.hf_model),
        seed=int(snakemake.wildcards.seed),
        outputs=dict(snakemake.output.items()),
        threads=snakemake.threads,
        device=snakemake.params.config["device"],
    )
