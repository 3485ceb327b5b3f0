from attnexp.pipeline import call
from attnexp.pipeline.data import run_preprocess

call(run_preprocess, snakemake)
