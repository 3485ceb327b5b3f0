from attnexp.analyses.wp.settings import WPSettings
from attnexp.pipeline.wp import run_adversary_variance
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_adversary_variance(
        base_files=dict(snakemake.params.base),
        jw_adversary=snakemake.params.jw_adversary,
        settings=WPSettings.from_config(snakemake.params.config),
        output=snakemake.output[0],
    )
