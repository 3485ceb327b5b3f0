from attnexp.report.tables import build_rationale_table
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    build_rationale_table(snakemake.input.recovery, snakemake.output, snakemake.params.bootstrap)
