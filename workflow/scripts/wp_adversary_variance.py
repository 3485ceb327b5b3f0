from attnexp.runlog import log_to
from attnexp.wp import run_adversary_variance

with log_to(snakemake.log[0]):
    run_adversary_variance(
        dict(snakemake.params.base),
        snakemake.params.jw_adversary,
        snakemake.output[0],
        snakemake.params.variant,
    )
