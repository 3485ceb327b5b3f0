from attnexp.pipeline import call
from attnexp.pipeline.hf import run_hf_tokenize

call(run_hf_tokenize, snakemake)
