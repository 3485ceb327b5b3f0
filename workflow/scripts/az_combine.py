from attnexp.pipeline import call
from attnexp.pipeline.az import run_az_combine

call(run_az_combine, snakemake)
