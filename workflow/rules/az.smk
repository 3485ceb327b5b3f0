# Abnar & Zuidema (2020): a Transformer encoder, raw attention / rollout / flow at every layer against
# blank-out and input gradients (Spearman per example), and subject recovery on agreement data.


rule synthesize_agreement:
    output:
        "results/raw/synthetic/agreement/data.csv",
    log:
        "logs/raw/synthetic/agreement.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        seed=config["az"]["agreement"]["seed"],
        options=config["az"]["agreement"],
    script:
        "../scripts/az_agreement.py"


rule linzen_agreement:
    input:
        get_linzen_path,
    output:
        "results/raw/linzen/data.csv",
    log:
        "logs/raw/linzen.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        seed=config["az"]["sample_seed"],
    script:
        "../scripts/az_linzen.py"


rule az_analyse:
    input:
        model="results/models/{dataset}/transformer-self/seed{seed}/model.pt",
        instances="results/preprocessed/{dataset}/instances.parquet",
    output:
        relevance="results/az/{dataset}/seed{seed}/relevance.parquet",
        correlations="results/az/{dataset}/seed{seed}/correlations.parquet",
        summary="results/az/{dataset}/seed{seed}/correlation_summary.csv",
        recovery="results/az/{dataset}/seed{seed}/subject_recovery.csv",
    log:
        "logs/az/{dataset}/seed{seed}.log",
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        options=get_az_options,
    script:
        "../scripts/az_analyse.py"


rule az_report:
    input:
        summaries=get_az_files("correlation_summary.csv"),
        recoveries=get_az_files("subject_recovery.csv"),
        relevance=get_az_files("relevance.parquet"),
        instances=get_az_instances(),
    output:
        summary="results/az/correlation_summary.csv",
        recovery="results/az/subject_recovery.csv",
        tables="results/az/tables.md",
        curves=report(
            "results/az/figures/correlation_by_layer.png",
            caption="../report/az_correlation_by_layer.rst",
            category="Abnar & Zuidema",
        ),
        maps=report(
            get_az_cls_map_files(),
            caption="../report/az_cls_maps.rst",
            category="Abnar & Zuidema",
        ),
    log:
        "logs/az/report.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        gradient=config["az"]["gradient"],
    script:
        "../scripts/az_report.py"


rule transformer:
    input:
        get_transformer_targets(),
    localrule: True
