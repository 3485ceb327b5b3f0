from attnexp.pipeline import call
from attnexp.pipeline.erasure import run_erasure_figures

call(run_erasure_figures, snakemake)
