from attnexp.pipeline import call
from attnexp.pipeline.hf import run_hf_model

call(run_hf_model, snakemake)
