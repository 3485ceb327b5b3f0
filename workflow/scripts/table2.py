from attnexp.report.jw.tables import build_table2
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    build_table2(
        models=snakemake.params.models,
        kendall=snakemake.input.kendall,
        datasets=snakemake.params.datasets,
        metas=snakemake.input.meta,
        outputs=dict(snakemake.output.items()),
        pairs=snakemake.params.pairs,
        nan_policy=snakemake.params.nan_policy,
        bootstrap_options=snakemake.params.bootstrap,
    )
