from pathlib import Path

from attnexp.analyses.wp.runs import run_jw_adversary
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_jw_adversary(
        snakemake.input.model,
        Path(snakemake.input.instances).parent,
        dict(snakemake.params.analyses),
        snakemake.params.batch_size,
        snakemake.params.runs,
        int(snakemake.wildcards.seed),
        snakemake.output[0],
        threads=snakemake.threads,
    )
