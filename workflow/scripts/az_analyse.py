from attnexp.analyses.az.settings import AZSettings
from attnexp.pipeline.az import run_az_analysis
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_az_analysis(
        model=snakemake.input.model,
        instances=snakemake.input.instances,
        dataset=snakemake.wildcards.dataset,
        settings=AZSettings.from_config(snakemake.params.config),
        outputs=dict(snakemake.output.items()),
        threads=snakemake.threads,
        device=snakemake.params.config["device"],
    )
