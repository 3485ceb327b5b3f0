# Wiegreffe & Pinter (2019), "Attention is not not Explanation": the four tests on the base BiLSTM+tanh.
# Test 1: uniform baseline; Test 2: seed variance; Test 3: diagnostic MLP with guides; Test 4: consistent adversary.
# Runs and analyses: attnexp.analyses.wp; tables and figures: attnexp.report.wp; paths: attnexp.paths.


rule wp_train:
    input:
        unpack(get_wp_train_inputs),
    output:
        **paths.wp_run_files(),
    log:
        paths.log("wp", "{dataset}/{variant}/seed{seed}"),
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["train"]
    resources:
        **RESOURCES["analysis"],
        **GPU,
    params:
        hyperparameters=get_hyperparameters,
        embeddings=get_embeddings,
        config=config_sections(
            "wp", "model", "seeding", "device", "padded_lstm", "fused_adam"
        ),
    script:
        "../scripts/wp_train.py"


rule wp_adversary:
    input:
        unpack(get_wp_adversary_inputs),
    output:
        **paths.wp_run_files(variant=ADVERSARY_VARIANT),
    log:
        paths.log("wp", "{dataset}/adversarial/seed{seed}/lambda{lam}"),
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["train"]
    resources:
        **RESOURCES["heavy"],
        **GPU,
    params:
        hyperparameters=get_hyperparameters,
        base=get_wp_base,
        embeddings=get_embeddings,
        config=config_sections(
            "wp", "model", "seeding", "device", "padded_lstm", "fused_adam"
        ),
    script:
        "../scripts/wp_adversary.py"


rule wp_seed_variance:
    input:
        get_wp_seed_variance_inputs,
    output:
        paths.wp_dataset_files()["seed_variance"],
    log:
        paths.log("wp", "{dataset}/seed_variance"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        base=get_wp_base,
        seeds=get_wp_seed_files,
        config=config_sections("wp"),
    script:
        "../scripts/wp_seed_variance.py"


rule wp_jw_adversary:
    input:
        model=paths.wp_run_files(variant="base")["model"],
        instances=paths.preprocessed_files()["instances"],
    output:
        paths.wp_jw_adversary_file(),
    log:
        paths.log("wp", "{dataset}/base/seed{seed}/jw_adversary"),
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **RESOURCES["analysis"],
        **GPU,
    params:
        batch_size=lambda wildcards: get_hyperparameters(wildcards)["batch_size"],
        config=config_sections("wp", "analyses", "device", "padded_lstm"),
    script:
        "../scripts/wp_jw_adversary.py"


rule wp_adversary_variance:
    input:
        get_wp_adversary_variance_inputs,
    output:
        paths.wp_dataset_files()["adv_variance"],
    log:
        paths.log("wp", "{dataset}/adv_variance"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        base=get_wp_base,
        jw_adversary=get_wp_jw_adversary,
        config=config_sections("wp"),
    script:
        "../scripts/wp_adversary_variance.py"


rule wp_jsd_tvd_points:
    input:
        get_wp_points_inputs,
    output:
        paths.wp_dataset_files()["points"],
    log:
        paths.log("wp", "{dataset}/jsd_tvd_points"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        base=get_wp_base,
        seeds=get_wp_seed_files,
        uniform=get_wp_uniform_files,
        adversaries=get_wp_adversary_runs,
        jw_adversary=get_wp_jw_adversary,
        config=config_sections("wp"),
    script:
        "../scripts/wp_jsd_tvd_points.py"


# --- report: tables and figures ---


rule wp_uniform_table:
    input:
        base=get_wp_metrics("base"),
        uniform=get_wp_metrics("uniform"),
    output:
        **reported_table("wp", "uniform_table", "Test 1: uniform attention (Table 2)"),
    log:
        paths.log("wp", "uniform_table"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        reported=WP.jw_reported,
    script:
        "../scripts/wp_uniform_table.py"


rule wp_diagnostic_table:
    input:
        get_wp_diagnostic_metrics(),
    output:
        **reported_table("wp", "diagnostic_table", "Test 3: diagnostic MLP (Table 4)"),
    log:
        paths.log("wp", "diagnostic_table"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    script:
        "../scripts/wp_diagnostic_table.py"


rule wp_adversarial_table:
    input:
        adversaries=get_wp_adversarial_metrics(),
        base=get_wp_metrics("base"),
    output:
        **reported_table("wp", "adversarial_table", "Test 4: consistent adversary"),
    log:
        paths.log("wp", "adversarial_table"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    script:
        "../scripts/wp_adversarial_table.py"


rule wp_jsd_tvd_table:
    input:
        paths.wp_dataset_files()["points"],
    output:
        **reported_table(
            "wp",
            "{dataset}/jsd_tvd_points",
            "Test 4: JSD and TVD from the base",
            subcategory="{dataset}",
            model=WP_BASE_MODEL,
        ),
    log:
        paths.log("wp", "{dataset}/jsd_tvd_table"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    script:
        "../scripts/wp_jsd_tvd_table.py"


rule wp_variance_figures:
    input:
        lambda wildcards: paths.wp_dataset_files(wildcards.dataset)[
            f"{wildcards.kind}_variance"
        ],
    output:
        **wp_figure_outputs(
            "violin",
            "{kind}_violin",
            "variance_violin",
            "Test 2: {kind} variance (violin)",
        ),
        **wp_figure_outputs(
            "scatter",
            "{kind}_scatter",
            "variance_scatter",
            "Test 2: {kind} variance (scatter)",
        ),
    log:
        paths.log("wp", "{dataset}/{kind}_figures"),
    wildcard_constraints:
        kind="seed|adv",
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        compared=lambda wildcards: {"seed": "seeds", "adv": "adversary"}[wildcards.kind],
        config=config_sections("figures"),
    script:
        "../scripts/wp_variance_figures.py"


rule wp_jsd_tvd_figure:
    input:
        paths.wp_dataset_files()["points"],
    output:
        **wp_figure_outputs(
            "jsd_tvd", "jsd_tvd", "jsd_tvd", "Test 4: JSD-TVD plane (Figure 3)"
        ),
    log:
        paths.log("wp", "{dataset}/jsd_tvd_figure"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        config=config_sections("figures"),
    script:
        "../scripts/wp_jsd_tvd_figure.py"


# --- targets ---


rule wp_uniform:
    input:
        get_wp_uniform_targets(),
    localrule: True


rule wp_seeds:
    input:
        get_wp_seed_targets(),
    localrule: True


rule wp_diagnostic:
    input:
        get_wp_diagnostic_targets(),
    localrule: True


rule wp_adversarial:
    input:
        get_wp_adversarial_targets(),
    localrule: True


rule wp:
    input:
        get_wp_targets(),
    localrule: True
