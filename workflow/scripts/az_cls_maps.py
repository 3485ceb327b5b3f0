from attnexp.pipeline import call
from attnexp.pipeline.az import run_az_cls_maps

call(run_az_cls_maps, snakemake)
