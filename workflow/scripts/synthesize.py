from attnexp.pipeline import call
from attnexp.pipeline.data import run_synthesize

call(run_synthesize, snakemake)
