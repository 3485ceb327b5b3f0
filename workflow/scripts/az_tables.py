from attnexp.pipeline import call
from attnexp.pipeline.az import run_az_tables

call(run_az_tables, snakemake)
