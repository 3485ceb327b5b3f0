from pathlib import Path

from attnexp.models.train import run_training
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_training(
        Path(snakemake.input.instances).parent,
        snakemake.wildcards.dataset,
        snakemake.wildcards.encoder,
        snakemake.wildcards.attention,
        int(snakemake.wildcards.seed),
        dict(snakemake.params.hyperparameters),
        snakemake.params.select_on,
        dict(snakemake.params.model_options),
        snakemake.params.deterministic,
        dict(snakemake.output.items()),
        snakemake.threads,
        dict(snakemake.params.embeddings),
    )
