from attnexp.report.tables import build_cross_measure
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    build_cross_measure(
        snakemake.params.models,
        snakemake.input.kendall,
        snakemake.output,
        snakemake.params.legacy_labels,
        snakemake.params.bootstrap,
    )
