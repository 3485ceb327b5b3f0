from attnexp.pipeline import call
from attnexp.pipeline.az import run_az_pronouns

call(run_az_pronouns, snakemake)
