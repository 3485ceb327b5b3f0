from attnexp import paths
from attnexp.datasets.acquire import download
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    download(name=snakemake.params.archive, archive_dir=paths.ARCHIVES, raw_dir=paths.DOWNLOADED)
