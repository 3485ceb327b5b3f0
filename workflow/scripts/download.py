from attnexp.pipeline import call
from attnexp.pipeline.data import run_download

call(run_download, snakemake)
