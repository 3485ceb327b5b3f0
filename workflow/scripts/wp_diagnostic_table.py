from attnexp.runlog import log_to
from attnexp.wp import diagnostic_table

with log_to(snakemake.log[0]):
    diagnostic_table(list(snakemake.input), snakemake.output[0])
