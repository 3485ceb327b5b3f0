from attnexp.datasets.acquire import download
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    download(snakemake.params.archive, "resources/archives", "resources/raw")
