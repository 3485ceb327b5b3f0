from attnexp.pipeline import call
from attnexp.pipeline.az import run_az_correlation_figure

call(run_az_correlation_figure, snakemake)
