from attnexp.pipeline import call
from attnexp.pipeline.report import run_paper_comparison

call(run_paper_comparison, snakemake)
