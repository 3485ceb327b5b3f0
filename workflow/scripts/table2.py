from attnexp.report.tables import build_table2
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    build_table2(
        snakemake.params.models,
        snakemake.input.kendall,
        snakemake.params.datasets,
        snakemake.input.meta,
        snakemake.output,
        snakemake.params.pairs,
        snakemake.params.nan_policy,
        snakemake.params.bootstrap,
    )
