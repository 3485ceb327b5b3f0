from attnexp.analyses.jw.settings import AnalysisSettings
from attnexp.pipeline.jw import run_analyses
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_analyses(
        model=snakemake.input.model,
        instances=snakemake.input.instances,
        meta=snakemake.input.meta,
        settings=AnalysisSettings.from_config(snakemake.params.config, snakemake.params.batch_size),
        labels=dict(snakemake.wildcards.items()),
        outputs=dict(snakemake.output.items()),
        threads=snakemake.threads,
    )
