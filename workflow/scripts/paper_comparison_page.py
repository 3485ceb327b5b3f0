from attnexp.pipeline import call
from attnexp.pipeline.report import run_paper_comparison_page

call(run_paper_comparison_page, snakemake)
