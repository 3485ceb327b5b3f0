from attnexp.pipeline import call
from attnexp.pipeline.train import run_train

call(run_train, snakemake)
