from attnexp.report.tables import build_table1
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    build_table1(
        snakemake.params.datasets, snakemake.input.meta, snakemake.input.metrics, snakemake.output, snakemake.params.bootstrap
    )
