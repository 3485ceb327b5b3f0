from attnexp.pipeline import call
from attnexp.pipeline.report import run_report

call(run_report, snakemake)
