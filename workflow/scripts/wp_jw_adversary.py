from attnexp.analyses.jw.settings import AnalysisSettings
from attnexp.analyses.wp.settings import WPSettings
from attnexp.pipeline.wp import run_jw_adversary
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_jw_adversary(
        model=snakemake.input.model,
        instances=snakemake.input.instances,
        settings=WPSettings.from_config(snakemake.params.config),
        analysis=AnalysisSettings.from_config(snakemake.params.config, snakemake.params.batch_size),
        seed=int(snakemake.wildcards.seed),
        output=snakemake.output[0],
        threads=snakemake.threads,
    )
