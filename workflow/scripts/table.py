from attnexp.pipeline import call
from attnexp.pipeline.report import run_table

call(run_table, snakemake)
