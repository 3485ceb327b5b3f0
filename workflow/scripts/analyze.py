from pathlib import Path

from attnexp.analyses.jw.run import run_analyses
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_analyses(
        snakemake.input.model,
        Path(snakemake.input.instances).parent,
        dict(snakemake.output.items()),
        snakemake.params.settings,
        snakemake.params.batch_size,
        dict(snakemake.wildcards.items()),
        snakemake.threads,
    )
