from attnexp.pipeline import call
from attnexp.pipeline.wp import run_wp_figures

call(run_wp_figures, snakemake)
