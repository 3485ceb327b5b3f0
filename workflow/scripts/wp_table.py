from attnexp.pipeline import call
from attnexp.pipeline.wp import run_wp_table

call(run_wp_table, snakemake)
