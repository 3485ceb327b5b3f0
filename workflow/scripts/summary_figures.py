from attnexp.pipeline import call
from attnexp.pipeline.jw import run_summary_figures

call(run_summary_figures, snakemake)
