from attnexp.pipeline import call
from attnexp.pipeline.az import run_az_analyse

call(run_az_analyse, snakemake)
