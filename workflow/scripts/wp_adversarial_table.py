from attnexp.analyses.wp.runs import adversarial_table
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    adversarial_table(
        list(snakemake.input.adversaries),
        list(snakemake.input.base),
        snakemake.output[0],
    )
