from attnexp.runlog import log_to
from attnexp.wp import adversarial_table

with log_to(snakemake.log[0]):
    adversarial_table(
        list(snakemake.input.adversaries),
        list(snakemake.input.base),
        snakemake.output[0],
    )
