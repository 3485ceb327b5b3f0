from attnexp.analyses.wp.runs import run_seed_variance
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_seed_variance(
        dict(snakemake.params.base),
        [dict(f) for f in snakemake.params.seeds],
        snakemake.output[0],
        snakemake.params.variant,
    )
