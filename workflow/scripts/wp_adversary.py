from pathlib import Path

from attnexp.analyses.wp.runs import run_wp_adversary
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_wp_adversary(
        Path(snakemake.input.instances).parent,
        snakemake.wildcards.dataset,
        int(snakemake.wildcards.seed),
        float(snakemake.wildcards.lam),
        dict(snakemake.params.hyperparameters),
        dict(snakemake.params.wp),
        dict(snakemake.params.model_options),
        snakemake.params.deterministic,
        dict(snakemake.params.base),
        dict(snakemake.output.items()),
        threads=snakemake.threads,
    )
