from attnexp.analyses.wp.runs import run_adversary_variance
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_adversary_variance(
        dict(snakemake.params.base),
        snakemake.params.jw_adversary,
        snakemake.output[0],
        snakemake.params.variant,
    )
