# One model per dataset x encoder x attention x seed (J&W §4-5), and the A&Z Transformer; both write the
# run files of attnexp.paths.RUN_FILES and are told apart by their encoder wildcard.
from attnexp.models.attention import ATTENTIONS as JW_ATTENTIONS
from attnexp.models.encoders import ENCODERS as JW_ENCODERS
from attnexp.models.transformer import ATTENTION as TRANSFORMER_ATTENTION
from attnexp.models.transformer import ENCODER as TRANSFORMER_ENCODER


rule train:
    input:
        **paths.preprocessed_files(),
    output:
        **paths.model_files(),
    log:
        paths.log("train", "{dataset}/{encoder}-{attention}/seed{seed}"),
    wildcard_constraints:
        encoder="|".join(JW_ENCODERS),
        attention="|".join(JW_ATTENTIONS),
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=get_train_mem_mb,
        runtime=get_train_runtime,
        gpu=0,  # attnexp.models.train runs on CPU; profiles/slurm shows how to request a GPU
    params:
        hyperparameters=get_hyperparameters,
        model_options=config["model"],
        embeddings=get_embeddings,
        # read through TrainSettings.from_config; listed so that changing them reruns the job
        select_on=config["model_selection"]["split"],
        deterministic=config["seeding"]["deterministic"],
    script:
        "../scripts/train.py"


rule train_transformer:
    input:
        **paths.preprocessed_files(),
    output:
        **paths.model_files(),
    log:
        paths.log("train", "{dataset}/{encoder}-{attention}/seed{seed}"),
    wildcard_constraints:
        encoder=TRANSFORMER_ENCODER,
        attention=TRANSFORMER_ATTENTION,
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=120,
    params:
        model_options=config["az"]["model"],
        # read through TrainSettings.from_config; listed so that changing them reruns the job
        train_options=config["az"]["train"],
        select_on=config["model_selection"]["split"],
        deterministic=config["seeding"]["deterministic"],
    script:
        "../scripts/az_train.py"
