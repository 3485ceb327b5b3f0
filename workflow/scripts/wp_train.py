from pathlib import Path

from attnexp.analyses.wp.runs import run_wp_model
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_wp_model(
        Path(snakemake.input.instances).parent,
        snakemake.wildcards.dataset,
        snakemake.wildcards.variant,
        int(snakemake.wildcards.seed),
        dict(snakemake.params.hyperparameters),
        dict(snakemake.params.wp),
        dict(snakemake.params.model_options),
        snakemake.params.deterministic,
        dict(snakemake.output.items()),
        guide_files=dict(snakemake.input.items()),
        threads=snakemake.threads,
    )
