from attnexp.analyses.wp.settings import WPSettings
from attnexp.pipeline.wp import run_seed_variance
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_seed_variance(
        base_files=dict(snakemake.params.base),
        seed_files=[dict(f) for f in snakemake.params.seeds],
        settings=WPSettings.from_config(snakemake.params.config),
        output=snakemake.output[0],
    )
