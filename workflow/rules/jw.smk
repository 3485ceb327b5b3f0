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


# Tables, figures and the HTML report (J&W §7). Every figure can be requested on its own:
#   snakemake --cores 2 results/figures/{dataset}/{encoder}-{attention}/seed{seed}/{figure}.pdf
# runs only that figure's job (`model_figure`). The aggregate targets draw all figures of a dataset
# in ONE job (`dataset_figures`, requested through its manifest figures.json) to save start-up time.


ruleorder: model_figure > dataset_figures
ruleorder: summary_figure > summary_figures


rule table1:
    input:
        meta=expand("results/preprocessed/{dataset}/meta.json", dataset=DATASET_NAMES),
        metrics=[paths.model_files(**m)["metrics"] for m in grid_models()],
    output:
        **table_outputs("table1_datasets", "../report/table1_datasets.rst"),
    log:
        "logs/tables/table1_datasets.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        datasets=DATASET_NAMES,
        bootstrap=bootstrap_options(),
    script:
        "../scripts/table1.py"


rule table2:
    input:
        meta=expand("results/preprocessed/{dataset}/meta.json", dataset=DATASET_NAMES),
        kendall=[f"{analysis_dir(**m)}/kendall.parquet" for m in grid_models()],
    output:
        **table_outputs("table2_kendall", "../report/table2_kendall.rst"),
    log:
        "logs/tables/table2_kendall.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        models=grid_models(),
        datasets=DATASET_NAMES,
        pairs=FIGURES["table_pairs"],
        nan_policy=kendall_nan_policy(),
        bootstrap=bootstrap_options(),
    script:
        "../scripts/table2.py"


rule cross_measure_table:
    input:
        kendall=[f"{analysis_dir(**m)}/kendall.parquet" for m in grid_models()],
    output:
        **table_outputs("cross_measure", "../report/cross_measure.rst"),
    log:
        "logs/tables/cross_measure.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        models=grid_models(),
        legacy_labels=FIGURES["legacy_labels"],
        bootstrap=bootstrap_options(),
    script:
        "../scripts/cross_measure_table.py"


rule rationale_table:
    input:
        recovery=[f"{analysis_dir(**m)}/rationale_recovery.csv" for m in grid_models()],
    output:
        **table_outputs("rationale_recovery", "../report/rationale_recovery.rst"),
    log:
        "logs/tables/rationale_recovery.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        bootstrap=bootstrap_options(),
    script:
        "../scripts/rationale_table.py"


rule dataset_figures:
    input:
        get_dataset_figure_inputs,
        meta="results/preprocessed/{dataset}/meta.json",
    output:
        manifest="results/figures/{dataset}/figures.json",
        figures=model_figure_outputs(),
    log:
        "logs/figures/{dataset}.log",
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=30,
    params:
        models=get_dataset_figure_models,
        names=MODEL_FIGURE_NAMES,
        output_dir="results/figures/{dataset}",
        options=figure_options(),
    script:
        "../scripts/model_figures.py"


rule model_figure:
    input:
        get_model_figure_inputs,
        meta="results/preprocessed/{dataset}/meta.json",
    output:
        png=report(
            "results/figures/{dataset}/{encoder}-{attention}/seed{seed}/{figure}.png",
            caption="../report/model_figure.rst",
            category="{dataset}",
            subcategory="{encoder}-{attention} seed {seed}",
            labels={
                "figure": "{figure}",
                "model": "{encoder}-{attention}",
                "seed": "{seed}",
            },
        ),
        pdf="results/figures/{dataset}/{encoder}-{attention}/seed{seed}/{figure}.pdf",
    log:
        "logs/figures/{dataset}/{encoder}-{attention}/seed{seed}/{figure}.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        models=get_model_figure_models,
        names=lambda wildcards: [wildcards.figure],
        output_dir="results/figures/{dataset}",
        options=figure_options(),
    script:
        "../scripts/model_figures.py"


rule summary_figures:
    input:
        kendall="results/tables/table2_kendall.csv",
        cross="results/tables/cross_measure.csv",
    output:
        manifest="results/figures/summary/figures.json",
        figures=summary_figure_outputs(),
    log:
        "logs/figures/summary.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        names=SUMMARY_FIGURES,
        attentions=ATTENTIONS,
        output_dir=lambda wildcards, output: Path(output.manifest).parent,
        datasets=DATASET_NAMES,
        options=figure_options(),
    script:
        "../scripts/summary_figures.py"


rule summary_figure:
    input:
        kendall="results/tables/table2_kendall.csv",
        cross="results/tables/cross_measure.csv",
    output:
        png=report(
            "results/figures/summary/{attention}/{summary_figure}.png",
            caption="../report/summary_figure.rst",
            category="Summary",
            subcategory="{attention} attention",
            labels={"figure": "{summary_figure}", "attention": "{attention}"},
        ),
        pdf="results/figures/summary/{attention}/{summary_figure}.pdf",
    log:
        "logs/figures/summary/{attention}/{summary_figure}.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        names=lambda wildcards: [wildcards.summary_figure],
        attentions=lambda wildcards: [wildcards.attention],
        output_dir=lambda wildcards, output: Path(output.pdf).parents[1],
        datasets=DATASET_NAMES,
        options=figure_options(),
    script:
        "../scripts/summary_figures.py"
