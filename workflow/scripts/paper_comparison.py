from attnexp.report.comparison import build_paper_comparison
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    runs = snakemake.params.runs
    build_paper_comparison(
        metas=runs["metas"],
        jw_models=runs["jw_models"],
        wp_runs=runs["wp_runs"],
        az_runs=runs["az_runs"],
        outputs=dict(snakemake.output.items()),
        nan_policy=snakemake.params.nan_policy,
        bootstrap_options=snakemake.params.bootstrap,
    )
