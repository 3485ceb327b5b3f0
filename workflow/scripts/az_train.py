from pathlib import Path

from attnexp.analyses.az.run import run_transformer_training
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_transformer_training(
        Path(snakemake.input.instances).parent,
        snakemake.wildcards.dataset,
        int(snakemake.wildcards.seed),
        dict(snakemake.params.model_options),
        dict(snakemake.params.train_options),
        snakemake.params.select_on,
        snakemake.params.deterministic,
        dict(snakemake.output.items()),
        snakemake.threads,
    )
