from pathlib import Path

from attnexp.az import plot_cls_maps
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    plot_cls_maps(snakemake.input.relevance, Path(snakemake.input.instances).parent, snakemake.output[0])
