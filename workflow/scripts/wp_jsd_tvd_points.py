from attnexp.analyses.wp.runs import jsd_tvd_points
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    jsd_tvd_points(
        snakemake.wildcards.dataset,
        dict(snakemake.params.base),
        [dict(f) for f in snakemake.params.seeds],
        dict(snakemake.params.uniform),
        [dict(f) for f in snakemake.params.adversaries],
        list(snakemake.params.lambdas),
        snakemake.output[0],
        snakemake.params.tvd_binary,
        snakemake.params.aggregation,
        snakemake.params.jw_adversary,
    )
