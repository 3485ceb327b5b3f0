from attnexp.report.jw.tables import build_cross_measure
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    build_cross_measure(
        models=snakemake.params.models,
        kendall=snakemake.input.kendall,
        outputs=dict(snakemake.output.items()),
        legacy_labels=snakemake.params.legacy_labels,
        bootstrap_options=snakemake.params.bootstrap,
    )
