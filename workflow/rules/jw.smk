# Jain & Wallace (2019). §6 analyses of every trained model on its test split: importance (gradient, LOO, IG),
# Kendall tau, permutation, adversarial attention and planted-rationale recovery, in one job per model.


rule analyze:
    input:
        **paths.preprocessed_files(),
        model=paths.model_files()["model"],
    output:
        **paths.analysis_files(),
    log:
        paths.log("analyses", "{dataset}/{encoder}-{attention}/seed{seed}"),
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **RESOURCES["analysis"],
        **GPU,
    params:
        config=config_sections("analyses", "device", "padded_lstm"),
        batch_size=get_analysis_batch_size,
    script:
        "../scripts/analyze.py"


# Tables and figures (J&W §7). Every figure can be requested on its own:
#   snakemake --cores 2 results/figures/jw/{dataset}/{encoder}-{attention}/seed{seed}/{figure}.pdf
# The aggregate targets draw all figures of a dataset in ONE job (`dataset_figures`, requested through its
# manifest figures.json) to save start-up time; `model_figure` draws any other figure alone. Their wildcard
# constraints make them disjoint (each figure has one producing rule), and likewise for the summary figures.


rule table1:
    input:
        meta=[paths.preprocessed_files(d)["meta"] for d in DATASET_NAMES],
        metrics=[paths.model_files(**m)["metrics"] for m in grid_models()],
    output:
        **reported_table("jw", "table1_datasets", TABLE_TITLES["table1_datasets"]),
    log:
        paths.log("tables", "jw/table1_datasets"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        datasets=DATASET_NAMES,
        bootstrap=bootstrap_options(),
    script:
        "../scripts/table1.py"


rule table2:
    input:
        meta=[paths.preprocessed_files(d)["meta"] for d in DATASET_NAMES],
        kendall=[paths.analysis_files(**m)["kendall"] for m in grid_models()],
    output:
        **reported_table("jw", "table2_kendall", TABLE_TITLES["table2_kendall"]),
    log:
        paths.log("tables", "jw/table2_kendall"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        models=grid_models(),
        datasets=DATASET_NAMES,
        pairs=FIGURES["table_pairs"],
        nan_policy=config["analyses"]["kendall"]["nan_policy"],  # as kendall_summary.csv (J&W §6.3)
        bootstrap=bootstrap_options(),
    script:
        "../scripts/table2.py"


rule cross_measure_table:
    input:
        kendall=[paths.analysis_files(**m)["kendall"] for m in grid_models()],
    output:
        **reported_table("jw", "cross_measure", TABLE_TITLES["cross_measure"]),
    log:
        paths.log("tables", "jw/cross_measure"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        models=grid_models(),
        legacy_labels=FIGURES["legacy_labels"],
        bootstrap=bootstrap_options(),
    script:
        "../scripts/cross_measure_table.py"


rule rationale_table:
    input:
        recovery=[paths.analysis_files(**m)["rationale"] for m in grid_models()],
    output:
        **reported_table("jw", "rationale_recovery", TABLE_TITLES["rationale_recovery"]),
    log:
        paths.log("tables", "jw/rationale_recovery"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        bootstrap=bootstrap_options(),
    script:
        "../scripts/rationale_table.py"


rule dataset_figures:
    input:
        get_dataset_figure_inputs,
        meta=paths.preprocessed_files()["meta"],
    output:
        manifest=paths.figure_manifest("jw", "{dataset}"),
        figures=model_figure_outputs(),
    log:
        paths.log("figures", "jw/{dataset}"),
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        **RESOURCES["analysis"],
    params:
        models=get_dataset_figure_models,
        config=config_sections("figures"),
    script:
        "../scripts/model_figures.py"


rule model_figure:
    input:
        get_model_figure_inputs,
        meta=paths.preprocessed_files()["meta"],
    output:
        png=report(
            paths.jw_model_figure_files(name="{figure}")["png"],
            caption="../report/jw/model_figure.rst",
            category=PAPER_NAMES["jw"],
            subcategory=report_section("{dataset}"),
            labels=get_model_figure_labels,
        ),
        pdf=paths.jw_model_figure_files(name="{figure}")["pdf"],
    log:
        paths.log("figures", "jw/{dataset}/{encoder}-{attention}/seed{seed}/{figure}"),
    wildcard_constraints:
        encoder=single_model_figure_encoder(),
        figure="|".join(MODEL_FIGURE_TABLES),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        models=get_model_figure_models,
        config=config_sections("figures"),
    script:
        "../scripts/model_figures.py"


rule summary_figures:
    input:
        kendall=paths.table_files("jw", "table2_kendall")["csv"],
        cross=paths.table_files("jw", "cross_measure")["csv"],
    output:
        manifest=paths.figure_manifest("jw", "summary"),
        figures=summary_figure_outputs(),
    log:
        paths.log("figures", "jw/summary"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        figures=get_summary_figure_files(),
        datasets=DATASET_NAMES,
        config=config_sections("figures"),
    script:
        "../scripts/summary_figures.py"


rule summary_figure:
    input:
        kendall=paths.table_files("jw", "table2_kendall")["csv"],
        cross=paths.table_files("jw", "cross_measure")["csv"],
    output:
        png=report(
            paths.jw_summary_figure_files(name="{summary_figure}")["png"],
            caption="../report/jw/summary_figure.rst",
            category=PAPER_NAMES["jw"],
            subcategory=report_section(ALL_DATASETS),
            labels=get_summary_figure_labels,
        ),
        pdf=paths.jw_summary_figure_files(name="{summary_figure}")["pdf"],
    log:
        paths.log("figures", "jw/summary/{attention}/{summary_figure}"),
    wildcard_constraints:
        attention=single_summary_figure_attention(),
        summary_figure="|".join(SUMMARY_FIGURE_NAMES),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        figures=lambda wildcards, output: {
            wildcards.attention: {
                wildcards.summary_figure: {"png": output.png, "pdf": output.pdf}
            }
        },
        datasets=DATASET_NAMES,
        config=config_sections("figures"),
    script:
        "../scripts/summary_figures.py"


rule jw:
    input:
        get_jw_targets(),
    localrule: True
