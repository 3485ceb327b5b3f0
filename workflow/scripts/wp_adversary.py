from attnexp.pipeline import call
from attnexp.pipeline.wp import run_wp_adversary

call(run_wp_adversary, snakemake)
