from attnexp.pipeline import call
from attnexp.pipeline.jw import run_analyze

call(run_analyze, snakemake)
