# Jain & Wallace (2019). §6 analyses of every trained model on its test split: importance (gradient, LOO, IG),
# Kendall tau, permutation, adversarial attention and planted-rationale recovery, in one job per model.


rule analyze:
    input:
        **paths.preprocessed_files(),
        model=paths.model_files()["model"],
    output:
        **paths.analysis_files(),
        **(paths.erasure_files() if PLAN.erasure else {}),
    log:
        paths.log("analyses", "{dataset}/{encoder}-{attention}/seed{seed}"),
    priority: JOB_PRIORITY
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("analyze", "analysis"),
        settings=settings(job.AnalyzeSettings),
    script:
        "../scripts/analyze.py"


# Tables and figures (J&W §7). Every figure can be requested on its own:
#   snakemake --cores 2 results/figures/jw/{dataset}/{encoder}-{attention}/seed{seed}/{figure}.pdf
# The aggregate targets draw all figures of a dataset in ONE job (`dataset_figures`, requested through its
# manifest figures.json) to save start-up time; `model_figure` draws any other figure alone. Their wildcard
# constraints make them disjoint (each figure has one producing rule), and likewise for the summary figures.


rule table1:
    input:
        meta=get_table_metas(),
        metrics=get_table_files("model", "metrics"),
    output:
        **catalog_table("jw", "table1_datasets"),
    log:
        paths.log("tables", "jw/table1_datasets"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="table1"),
    script:
        "../scripts/table.py"


rule table2:
    input:
        meta=get_table_metas(),
        kendall=get_table_files("analysis", "kendall"),
    output:
        **catalog_table("jw", "table2_kendall"),
    log:
        paths.log("tables", "jw/table2_kendall"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="table2"),
    script:
        "../scripts/table.py"


rule cross_measure_table:
    input:
        kendall=get_table_files("analysis", "kendall"),
    output:
        **catalog_table("jw", "cross_measure"),
    log:
        paths.log("tables", "jw/cross_measure"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="cross_measure_table"),
    script:
        "../scripts/table.py"


rule rationale_table:
    input:
        recovery=get_table_files("analysis", "rationale"),
    output:
        **catalog_table("jw", "rationale_recovery"),
    log:
        paths.log("tables", "jw/rationale_recovery"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="rationale_table"),
    script:
        "../scripts/table.py"


rule dataset_figures:
    input:
        tables=get_dataset_figure_inputs,
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
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="dataset_figures"),
    script:
        "../scripts/model_figures.py"


rule model_figure:
    input:
        tables=get_model_figure_inputs,
        meta=paths.preprocessed_files()["meta"],
    output:
        **reported_figure(
            "jw",
            paths.jw_model_figure_files(name="{figure}"),
            "model_figure",
            lambda w: JW_FIGURE_TITLES[w.figure],
            model="{encoder}-{attention} seed {seed}",
        ),
    log:
        paths.log("figures", "jw/{dataset}/{encoder}-{attention}/seed{seed}/{figure}"),
    wildcard_constraints:
        encoder=PLAN.single_model_figure_encoder(),
        figure=PLAN.model_figure_alternatives(),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="model_figure"),
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
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="summary_figures"),
    script:
        "../scripts/summary_figures.py"


rule summary_figure:
    input:
        kendall=paths.table_files("jw", "table2_kendall")["csv"],
        cross=paths.table_files("jw", "cross_measure")["csv"],
    output:
        **reported_figure(
            "jw",
            paths.jw_summary_figure_files(name="{summary_figure}"),
            "summary_figure",
            lambda w: f"{JW_FIGURE_TITLES[w.summary_figure]} ({w.attention} attention)",
            ALL_DATASETS,
        ),
    log:
        paths.log("figures", "jw/summary/{attention}/{summary_figure}"),
    wildcard_constraints:
        attention=PLAN.single_summary_figure_attention(),
        summary_figure=PLAN.summary_figure_alternatives(),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="summary_figure"),
    script:
        "../scripts/summary_figures.py"


rule jw:
    input:
        PLAN.jw_targets(),
    localrule: True
