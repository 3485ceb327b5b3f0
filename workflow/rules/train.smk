# One model per dataset x encoder x attention x seed (J&W §4-5), and the A&Z Transformer; both write the
# run files of attnexp.paths.RUN_FILES and are told apart by their encoder wildcard.


rule train:
    input:
        unpack(get_train_inputs),
    output:
        **paths.model_files(),
    log:
        paths.log("train", "{dataset}/{encoder}-{attention}/seed{seed}"),
    wildcard_constraints:
        encoder="|".join(names.ENCODERS),
        attention="|".join(names.ATTENTIONS),
    priority: JOB_PRIORITY
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["train"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("train", "train"),
        settings=settings(job.TrainSettings),
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
        encoder=names.TRANSFORMER_ENCODER,
        attention="|".join(names.TRANSFORMER_ATTENTIONS),
    priority: JOB_PRIORITY
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["train"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("train_transformer", "train"),
        settings=settings(job.TransformerSettings),
    script:
        "../scripts/train_transformer.py"
