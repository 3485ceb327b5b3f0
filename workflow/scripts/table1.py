from attnexp.report.jw.tables import build_table1
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    build_table1(
        datasets=snakemake.params.datasets,
        metas=snakemake.input.meta,
        metrics=snakemake.input.metrics,
        outputs=dict(snakemake.output.items()),
        bootstrap_options=snakemake.params.bootstrap,
    )
