from attnexp.analyses.wp.runs import diagnostic_table
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    diagnostic_table(list(snakemake.input), snakemake.output[0])
