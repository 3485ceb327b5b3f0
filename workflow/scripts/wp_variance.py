from attnexp.pipeline import call
from attnexp.pipeline.wp import run_wp_variance

call(run_wp_variance, snakemake)
