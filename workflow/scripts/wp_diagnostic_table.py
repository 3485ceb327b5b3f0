from attnexp.report.wp import write_diagnostic_table
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_diagnostic_table(metrics=list(snakemake.input), outputs=dict(snakemake.output.items()))
