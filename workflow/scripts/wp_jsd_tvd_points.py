from attnexp.pipeline import call
from attnexp.pipeline.wp import run_wp_jsd_tvd_points

call(run_wp_jsd_tvd_points, snakemake)
