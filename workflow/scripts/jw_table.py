from attnexp.pipeline import call
from attnexp.pipeline.jw import run_table

call(run_table, snakemake)
