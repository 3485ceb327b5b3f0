from attnexp.report.az import write_az_tables
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_az_tables(
        summary=snakemake.input.summary,
        recovery=snakemake.input.recovery,
        gradient=snakemake.params.gradient,
        outputs=dict(snakemake.output.items()),
    )
