from attnexp.runlog import log_to
from attnexp.wp import run_seed_variance

with log_to(snakemake.log[0]):
    run_seed_variance(
        dict(snakemake.params.base),
        [dict(f) for f in snakemake.params.seeds],
        snakemake.output[0],
        snakemake.params.variant,
    )
