from pathlib import Path

from attnexp.analyses.az.run import run_az_analysis
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_az_analysis(
        snakemake.input.model,
        Path(snakemake.input.instances).parent,
        snakemake.wildcards.dataset,
        dict(snakemake.params.options),
        dict(snakemake.output.items()),
        snakemake.threads,
    )
