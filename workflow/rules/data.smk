# Raw data (generated offline default) and the one preprocessed format every later stage reads.


rule synthesize_sentiment:
    output:
        "results/raw/synthetic/sentiment/data.csv",
    log:
        "logs/raw/synthetic/sentiment.log",
    localrule: True
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        seed=config["synthetic"]["seed"],
        options=config["synthetic"]["sentiment"],
    script:
        "../scripts/synthesize.py"


rule synthesize_nli:
    output:
        expand(
            "results/raw/synthetic/nli/snli_1.0_{split}.tsv",
            split=["train", "dev", "test"],
        ),
    log:
        "logs/raw/synthetic/nli.log",
    localrule: True
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        seed=config["synthetic"]["seed"],
        options=config["synthetic"]["nli"],
    script:
        "../scripts/synthesize.py"


rule synthesize_babi:
    output:
        expand(
            "results/raw/synthetic/babi/en/{stem}_{split}.txt",
            stem=[
                "qa1_single-supporting-fact",
                "qa2_two-supporting-facts",
                "qa3_three-supporting-facts",
            ],
            split=["train", "test"],
        ),
    log:
        "logs/raw/synthetic/babi.log",
    localrule: True
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        seed=config["synthetic"]["seed"],
        options=config["synthetic"]["babi"],
    script:
        "../scripts/synthesize.py"


rule preprocess:
    input:
        get_raw_files,
    output:
        instances="results/preprocessed/{dataset}/instances.parquet",
        meta="results/preprocessed/{dataset}/meta.json",
    log:
        "logs/preprocess/{dataset}.log",
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=get_preprocess_mem_mb,
        runtime=get_preprocess_runtime,
    params:
        raw_dir=get_raw_dir,
        options=config["preprocessing"],
        user_files=config["data"]["user_files"],
    script:
        "../scripts/preprocess.py"


# Official archives for users with internet (J&W §2): one download rule per archive, checksummed,
# extracted under resources/raw. Used only when data.raw_data_dir is null.
for _archive in DOWNLOADS:

    rule:
        name:
            f"download_{_archive}"
        output:
            download_outputs(_archive),
        log:
            f"logs/download/{_archive}.log",
        localrule: True  # compute nodes often have no internet; the submit host downloads
        conda:
            "../envs/attnexp.yaml"
        resources:
            runtime=60,
        params:
            archive=_archive,
            url=lambda wildcards, url=DOWNLOADS[_archive].url: url,
        script:
            "../scripts/download.py"


rule preprocessed:
    input:
        get_datasets_targets(),
    localrule: True
