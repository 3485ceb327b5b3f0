from attnexp.pipeline import call
from attnexp.pipeline.jw import run_model_figures

call(run_model_figures, snakemake)
