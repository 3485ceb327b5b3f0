# One model per dataset x encoder x attention x seed (J&W §4-5).


rule train:
    input:
        instances="results/preprocessed/{dataset}/instances.parquet",
        meta="results/preprocessed/{dataset}/meta.json",
    output:
        model="results/models/{dataset}/{encoder}-{attention}/seed{seed}/model.pt",
        metrics="results/models/{dataset}/{encoder}-{attention}/seed{seed}/metrics.json",
        history="results/models/{dataset}/{encoder}-{attention}/seed{seed}/train_log.csv",
        config="results/models/{dataset}/{encoder}-{attention}/seed{seed}/config.yaml",
    log:
        "logs/train/{dataset}/{encoder}-{attention}/seed{seed}.log",
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        **RESOURCES["train"],
        gpu=0,  # attnexp.models.train runs on CPU; profiles/slurm shows how to request a GPU
    params:
        hyperparameters=get_hyperparameters,
        select_on=config["model_selection"]["split"],
        model_options=config["model"],
        deterministic=config["seeding"]["deterministic"],
        embeddings=get_embeddings,
    script:
        "../scripts/train.py"
