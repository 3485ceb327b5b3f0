# J&W §6 analyses of every trained model on its test split: importance (gradient, LOO, IG), Kendall tau,
# permutation, adversarial attention and planted-rationale recovery, in one job per model.


rule analyze:
    input:
        model="results/models/{dataset}/{encoder}-{attention}/seed{seed}/model.pt",
        instances="results/preprocessed/{dataset}/instances.parquet",
        meta="results/preprocessed/{dataset}/meta.json",
    output:
        importance="results/analyses/{dataset}/{encoder}-{attention}/seed{seed}/importance.parquet",
        kendall="results/analyses/{dataset}/{encoder}-{attention}/seed{seed}/kendall.parquet",
        kendall_summary="results/analyses/{dataset}/{encoder}-{attention}/seed{seed}/kendall_summary.csv",
        permutation="results/analyses/{dataset}/{encoder}-{attention}/seed{seed}/permutation.parquet",
        adversary="results/analyses/{dataset}/{encoder}-{attention}/seed{seed}/adversary.parquet",
        rationale="results/analyses/{dataset}/{encoder}-{attention}/seed{seed}/rationale_recovery.csv",
        config="results/analyses/{dataset}/{encoder}-{attention}/seed{seed}/analysis_config.yaml",
    log:
        "logs/analyses/{dataset}/{encoder}-{attention}/seed{seed}.log",
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        settings=config["analyses"],
        batch_size=get_analysis_batch_size,
    script:
        "../scripts/analyze.py"
