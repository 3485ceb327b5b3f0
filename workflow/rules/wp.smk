# Wiegreffe & Pinter (2019), "Attention is not not Explanation": the four tests on the base BiLSTM+tanh.
# Test 1: uniform baseline; Test 2: seed variance; Test 3: diagnostic MLP with guides; Test 4: consistent adversary.
# Jobs: attnexp.pipeline.wp (the science in attnexp.analyses.wp, tables and figures in attnexp.report.wp).


rule wp_train:
    input:
        unpack(get_wp_train_inputs),
    output:
        **paths.wp_run_files(),
    log:
        paths.log("wp", "{dataset}/{variant}/seed{seed}"),
    priority: JOB_PRIORITY
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["train"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("wp_train", "train"),
        settings=settings(job.WPRunSettings),
    script:
        "../scripts/wp_train.py"


rule wp_adversary:
    input:
        unpack(get_wp_adversary_inputs),
    output:
        **paths.wp_run_files(variant="adversarial"),
    log:
        paths.log("wp", "{dataset}/adversarial/seed{seed}/lambda{lam}"),
    priority: JOB_PRIORITY
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["train"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("wp_adversary", "train"),
        settings=settings(job.WPRunSettings),
    script:
        "../scripts/wp_adversary.py"


rule wp_seed_variance:
    input:
        get_wp_analysis_inputs("seed_variance"),
    output:
        seed_variance=paths.wp_dataset_files()["seed_variance"],
    log:
        paths.log("wp", "{dataset}/seed_variance"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.WPAnalysisSettings),
    script:
        "../scripts/wp_variance.py"


rule wp_jw_adversary:
    input:
        model=paths.wp_run_files(variant="base")["model"],
        instances=paths.preprocessed_files()["instances"],
    output:
        table=paths.wp_jw_adversary_file(),
    log:
        paths.log("wp", "{dataset}/base/seed{seed}/jw_adversary"),
    priority: JOB_PRIORITY
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("wp_jw_adversary", "analysis"),
        settings=settings(job.WPAnalysisSettings),
    script:
        "../scripts/wp_jw_adversary.py"


rule wp_adversary_variance:
    input:
        get_wp_analysis_inputs("adv_variance"),
    output:
        adv_variance=paths.wp_dataset_files()["adv_variance"],
    log:
        paths.log("wp", "{dataset}/adv_variance"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.WPAnalysisSettings),
    script:
        "../scripts/wp_variance.py"


rule wp_jsd_tvd_points:
    input:
        get_wp_analysis_inputs("points"),
    output:
        points=paths.wp_dataset_files()["points"],
    log:
        paths.log("wp", "{dataset}/jsd_tvd_points"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.WPAnalysisSettings),
    script:
        "../scripts/wp_jsd_tvd_points.py"


# --- report: tables and figures ---


rule wp_uniform_table:
    input:
        base=get_wp_metrics("base"),
        uniform=get_wp_metrics("uniform"),
    output:
        **catalog_table("wp", "uniform_table"),
    log:
        paths.log("wp", "uniform_table"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="wp_uniform_table"),
    script:
        "../scripts/table.py"


rule wp_diagnostic_table:
    input:
        metrics=PLAN.wp_diagnostic_metrics(),
    output:
        **catalog_table("wp", "diagnostic_table"),
    log:
        paths.log("wp", "diagnostic_table"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="wp_diagnostic_table"),
    script:
        "../scripts/table.py"


rule wp_adversarial_table:
    input:
        adversaries=PLAN.wp_adversarial_metrics(),
        base=get_wp_metrics("base"),
    output:
        **catalog_table("wp", "adversarial_table"),
    log:
        paths.log("wp", "adversarial_table"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="wp_adversarial_table"),
    script:
        "../scripts/table.py"


rule wp_jsd_tvd_table:
    input:
        points=paths.wp_dataset_files()["points"],
    output:
        **catalog_table(
            "wp",
            "{dataset}/jsd_tvd_points",
            subcategory="{dataset}",
            model=PLAN.wp_base_model,
        ),
    log:
        paths.log("wp", "{dataset}/jsd_tvd_table"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="wp_jsd_tvd_table"),
    script:
        "../scripts/table.py"


rule wp_variance_figures:
    input:
        variance=lambda w: paths.wp_dataset_files(w.dataset)[f"{w.kind}_variance"],
        meta=paths.preprocessed_files()["meta"],
    output:
        **catalog_figure(
            "wp",
            "{dataset}/{kind}_violin",
            "variance_violin",
            model=PLAN.wp_base_model,
            prefix="violin_",
        ),
        **catalog_figure(
            "wp",
            "{dataset}/{kind}_scatter",
            "variance_scatter",
            model=PLAN.wp_base_model,
            prefix="scatter_",
        ),
    log:
        paths.log("wp", "{dataset}/{kind}_figures"),
    wildcard_constraints:
        kind="seed|adv",
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="wp_variance_figures"),
    script:
        "../scripts/wp_figures.py"


rule wp_jsd_tvd_figure:
    input:
        points=paths.wp_dataset_files()["points"],
    output:
        **catalog_figure(
            "wp",
            "{dataset}/jsd_tvd",
            "jsd_tvd",
            model=PLAN.wp_base_model,
            prefix="jsd_tvd_",
        ),
    log:
        paths.log("wp", "{dataset}/jsd_tvd_figure"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="wp_jsd_tvd_figure"),
    script:
        "../scripts/wp_figures.py"


# --- targets ---


rule wp_uniform:
    input:
        PLAN.wp_uniform_targets(),
    localrule: True


rule wp_seeds:
    input:
        PLAN.wp_seed_targets(),
    localrule: True


rule wp_diagnostic:
    input:
        PLAN.wp_diagnostic_targets(),
    localrule: True


rule wp_adversarial:
    input:
        PLAN.wp_adversarial_targets(),
    localrule: True


rule wp:
    input:
        PLAN.wp_targets(),
    localrule: True
