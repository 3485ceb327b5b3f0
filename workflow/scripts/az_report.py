from attnexp.report.az import write_report
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_report(dict(snakemake.input.items()), dict(snakemake.output.items()), snakemake.params.gradient)
