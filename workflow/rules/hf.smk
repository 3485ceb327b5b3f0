# Hugging Face encoders (config `hf`): each model re-tokenizes the grid datasets with its own tokenizer, is used
# as given or fine-tuned per dataset and seed, and goes through the A&Z analyses (rows `{dataset}@{hf_model}` in
# the A&Z tables) and the J&W tests without the adversary. A missing checkpoint stops at config validation.


rule hf_tokenize:
    input:
        unpack(get_hf_tokenize_inputs),
    output:
        **paths.hf_preprocessed_files(),
    log:
        paths.log("hf", "{hf_model}/preprocessed/{dataset}"),
    wildcard_constraints:
        dataset=PLAN.hf_wildcards()["dataset"],
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.HFRunSettings),
    script:
        "../scripts/hf_tokenize.py"


rule hf_model:
    input:
        **paths.hf_preprocessed_files(),
    output:
        **paths.hf_model_files(),
    log:
        paths.log("hf", "{hf_model}/{dataset}/seed{seed}/model"),
    wildcard_constraints:
        **PLAN.hf_wildcards(),
    priority: JOB_PRIORITY
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["train"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("hf_model", "train"),
        settings=settings(job.HFRunSettings),
    script:
        "../scripts/hf_model.py"


rule hf_az:
    input:
        model=paths.hf_model_files()["model"],
        instances=paths.hf_preprocessed_files()["instances"],
    output:
        **paths.hf_az_files(),
        **(paths.hf_az_erasure_files() if PLAN.erasure else {}),
    log:
        paths.log("hf", "{hf_model}/{dataset}/seed{seed}/az"),
    wildcard_constraints:
        **PLAN.hf_wildcards(),
    priority: JOB_PRIORITY
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("hf_az", "analysis"),
        settings=settings(job.AZAnalysisSettings),
    script:
        "../scripts/az_analyse.py"


rule hf_analyze:
    input:
        **paths.hf_preprocessed_files(),
        model=paths.hf_model_files()["model"],
    output:
        **paths.hf_analysis_files(),
        **(paths.hf_erasure_files() if PLAN.erasure else {}),
    log:
        paths.log("hf", "{hf_model}/{dataset}/seed{seed}/jw"),
    wildcard_constraints:
        **PLAN.hf_wildcards(),
    priority: JOB_PRIORITY
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("hf_analyze", "analysis"),
        settings=settings(job.AnalyzeSettings),
    script:
        "../scripts/analyze.py"


rule hf_correlation_figure:
    input:
        summary=paths.az_combined_files()["summary"],
    output:
        **reported_figure(
            "az",
            paths.figure_files("az", paths.hf_figure_stem("correlation_by_layer")),
            "correlation_by_layer",
            "Spearman's rho by layer",
            model="{hf_model}",
        ),
    log:
        paths.log("hf", "{hf_model}/{dataset}/correlation_figure"),
    wildcard_constraints:
        dataset=PLAN.hf_wildcards()["dataset"],
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="az_correlation_figure"),
    script:
        "../scripts/az_correlation_figure.py"


rule hf_cls_maps:
    input:
        relevance=paths.hf_az_files()["relevance"],
        meta=paths.hf_preprocessed_files()["meta"],
    output:
        **reported_figure(
            "az",
            paths.figure_files("az", paths.hf_figure_stem("cls_maps", seed="{seed}")),
            "cls_maps",
            "[CLS] maps across layers",
            model="{hf_model} seed {seed}",
        ),
    log:
        paths.log("hf", "{hf_model}/{dataset}/cls_maps_seed{seed}"),
    wildcard_constraints:
        **PLAN.hf_wildcards(),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="az_cls_maps"),
    script:
        "../scripts/az_cls_maps.py"


# The J&W figures of every Hugging Face run with J&W analyses (results/figures/jw/{dataset}/hf-{hf_model}/...): the
# tau histograms and densities and the permutation plots; no adversary's (a multi-head model has no single
# attention vector for it to replace).
rule hf_figures:
    input:
        tables=get_hf_figure_inputs,
        meta=paths.hf_preprocessed_files()["meta"],
    output:
        **hf_figure_outputs(),
    log:
        paths.log("figures", "jw/{dataset}/hf-{hf_model}/seed{seed}"),
    wildcard_constraints:
        **PLAN.hf_wildcards(),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="hf_figures"),
    script:
        "../scripts/model_figures.py"


rule hf:
    input:
        PLAN.hf_targets(),
    localrule: True
