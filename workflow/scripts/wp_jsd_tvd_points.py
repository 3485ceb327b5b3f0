from attnexp.analyses.wp.settings import WPSettings
from attnexp.pipeline.wp import run_jsd_tvd_points
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_jsd_tvd_points(
        dataset=snakemake.wildcards.dataset,
        settings=WPSettings.from_config(snakemake.params.config),
        base_files=dict(snakemake.params.base),
        seed_files=[dict(f) for f in snakemake.params.seeds],
        uniform_files=dict(snakemake.params.uniform),
        adversary_files=[dict(f) for f in snakemake.params.adversaries],
        jw_adversary=snakemake.params.jw_adversary,
        output=snakemake.output[0],
    )
