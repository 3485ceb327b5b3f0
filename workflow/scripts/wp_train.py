from attnexp.pipeline import call
from attnexp.pipeline.wp import run_wp_train

call(run_wp_train, snakemake)
