from attnexp.pipeline import call
from attnexp.pipeline.erasure import run_erasure_tables

call(run_erasure_tables, snakemake)
