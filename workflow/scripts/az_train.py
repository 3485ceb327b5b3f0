from attnexp.models.settings import TrainSettings
from attnexp.pipeline.train import run_transformer_training
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_transformer_training(
        instances=snakemake.input.instances,
        meta=snakemake.input.meta,
        dataset=snakemake.wildcards.dataset,
        model_options=dict(snakemake.params.model_options),
        settings=TrainSettings.from_config(snakemake.params.config, seed=int(snakemake.wildcards.seed), paper="az"),
        outputs=dict(snakemake.output.items()),
        recipe=snakemake.params.config["az"]["train"]["recipe"],
        patience=snakemake.params.config["az"]["train"]["patience"],
        attention=snakemake.wildcards.attention,
        threads=snakemake.threads,
    )
