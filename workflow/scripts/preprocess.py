from attnexp.data.preprocess import run_preprocess
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_preprocess(
        snakemake.wildcards.dataset,
        snakemake.params.raw_dir,
        snakemake.output.instances,
        snakemake.output.meta,
        dict(snakemake.params.options),
        dict(snakemake.params.user_files),
    )
