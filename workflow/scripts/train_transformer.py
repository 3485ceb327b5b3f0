from attnexp.pipeline import call
from attnexp.pipeline.train import run_train_transformer

call(run_train_transformer, snakemake)
