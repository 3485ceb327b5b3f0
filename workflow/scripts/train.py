from attnexp.models.settings import TrainSettings
from attnexp.pipeline.train import run_training
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_training(
        instances=snakemake.input.instances,
        meta=snakemake.input.meta,
        dataset=snakemake.wildcards.dataset,
        encoder=snakemake.wildcards.encoder,
        attention=snakemake.wildcards.attention,
        hyperparameters=dict(snakemake.params.hyperparameters),
        model_options=dict(snakemake.params.model_options),
        embeddings=dict(snakemake.params.embeddings),
        settings=TrainSettings.from_config(
            snakemake.params.config, seed=int(snakemake.wildcards.seed), hyperparameters=snakemake.params.hyperparameters
        ),
        outputs=dict(snakemake.output.items()),
        threads=snakemake.threads,
    )
