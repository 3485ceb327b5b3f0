# Wiegreffe & Pinter (2019), "Attention is not not Explanation": the four tests on the base BiLSTM+tanh.
# Test 1: uniform baseline; Test 2: seed variance; Test 3: diagnostic MLP with guides; Test 4: consistent adversary.


rule wp_train:
    input:
        unpack(get_wp_train_inputs),
    output:
        model="results/wp/{dataset}/{variant}/seed{seed}/model.pt",
        metrics="results/wp/{dataset}/{variant}/seed{seed}/test_metrics.json",
        history="results/wp/{dataset}/{variant}/seed{seed}/train_log.csv",
        config="results/wp/{dataset}/{variant}/seed{seed}/config.yaml",
        train_predictions="results/wp/{dataset}/{variant}/seed{seed}/train_predictions.parquet",
        train_attention="results/wp/{dataset}/{variant}/seed{seed}/train_attention.parquet",
        dev_predictions="results/wp/{dataset}/{variant}/seed{seed}/dev_predictions.parquet",
        dev_attention="results/wp/{dataset}/{variant}/seed{seed}/dev_attention.parquet",
        test_predictions="results/wp/{dataset}/{variant}/seed{seed}/test_predictions.parquet",
        test_attention="results/wp/{dataset}/{variant}/seed{seed}/test_attention.parquet",
    log:
        "logs/wp/{dataset}/{variant}/seed{seed}.log",
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        hyperparameters=get_hyperparameters,
        wp=WP,
        model_options=config["model"],
        deterministic=config["seeding"]["deterministic"],
    script:
        "../scripts/wp_train.py"


rule wp_adversary:
    input:
        unpack(get_wp_adversary_inputs),
    output:
        model="results/wp/{dataset}/adversarial/seed{seed}/lambda{lam}/model.pt",
        metrics="results/wp/{dataset}/adversarial/seed{seed}/lambda{lam}/test_metrics.json",
        history="results/wp/{dataset}/adversarial/seed{seed}/lambda{lam}/train_log.csv",
        config="results/wp/{dataset}/adversarial/seed{seed}/lambda{lam}/config.yaml",
        train_predictions="results/wp/{dataset}/adversarial/seed{seed}/lambda{lam}/train_predictions.parquet",
        train_attention="results/wp/{dataset}/adversarial/seed{seed}/lambda{lam}/train_attention.parquet",
        dev_predictions="results/wp/{dataset}/adversarial/seed{seed}/lambda{lam}/dev_predictions.parquet",
        dev_attention="results/wp/{dataset}/adversarial/seed{seed}/lambda{lam}/dev_attention.parquet",
        test_predictions="results/wp/{dataset}/adversarial/seed{seed}/lambda{lam}/test_predictions.parquet",
        test_attention="results/wp/{dataset}/adversarial/seed{seed}/lambda{lam}/test_attention.parquet",
    log:
        "logs/wp/{dataset}/adversarial/seed{seed}/lambda{lam}.log",
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        hyperparameters=get_hyperparameters,
        wp=WP,
        model_options=config["model"],
        deterministic=config["seeding"]["deterministic"],
        base=lambda wildcards: wp_base_files(wildcards.dataset),
    script:
        "../scripts/wp_adversary.py"


rule wp_seed_variance:
    input:
        get_wp_seed_variance_inputs,
    output:
        "results/wp/{dataset}/seed_variance.parquet",
    log:
        "logs/wp/{dataset}/seed_variance.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        base=lambda wildcards: wp_base_files(wildcards.dataset),
        seeds=get_wp_seed_files,
        variant=WP["seed_plot_variant"],
    script:
        "../scripts/wp_seed_variance.py"


rule wp_jw_adversary:
    input:
        model="results/wp/{dataset}/base/seed{seed}/model.pt",
        instances="results/preprocessed/{dataset}/instances.parquet",
        meta="results/preprocessed/{dataset}/meta.json",
    output:
        "results/wp/{dataset}/base/seed{seed}/jw_adversary.parquet",
    log:
        "logs/wp/{dataset}/base/seed{seed}/jw_adversary.log",
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        analyses=config["analyses"],
        batch_size=lambda wildcards: get_hyperparameters(wildcards)["batch_size"],
        runs=WP["jw_adversary_runs"],
    script:
        "../scripts/wp_jw_adversary.py"


rule wp_adversary_variance:
    input:
        get_wp_adversary_variance_inputs,
    output:
        "results/wp/{dataset}/adv_variance.parquet",
    log:
        "logs/wp/{dataset}/adv_variance.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        base=lambda wildcards: wp_base_files(wildcards.dataset),
        jw_adversary=lambda wildcards: wp_jw_adversary_file(wildcards.dataset),
        variant=WP["seed_plot_variant"],
    script:
        "../scripts/wp_adversary_variance.py"


rule wp_variance_figures:
    input:
        "results/wp/{dataset}/{kind}_variance.parquet",
    output:
        violin_png=report(
            "results/figures/wp/{dataset}/{kind}_violin.png",
            caption="../report/wp/variance_violin.rst",
            category="Wiegreffe & Pinter",
            subcategory="{dataset}",
        ),
        violin_pdf="results/figures/wp/{dataset}/{kind}_violin.pdf",
        scatter_png=report(
            "results/figures/wp/{dataset}/{kind}_scatter.png",
            caption="../report/wp/variance_scatter.rst",
            category="Wiegreffe & Pinter",
            subcategory="{dataset}",
        ),
        scatter_pdf="results/figures/wp/{dataset}/{kind}_scatter.pdf",
    log:
        "logs/wp/{dataset}/{kind}_figures.log",
    wildcard_constraints:
        kind="seed|adv",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        compared=lambda wildcards: {"seed": "seeds", "adv": "adversary"}[wildcards.kind],
    script:
        "../scripts/wp_variance_figures.py"


rule wp_uniform_table:
    input:
        base=wp_metrics("base"),
        uniform=wp_metrics("uniform"),
    output:
        report(
            "results/tables/wp/uniform_table.csv",
            caption="../report/wp/uniform_table.rst",
            category="Wiegreffe & Pinter",
            subcategory="tables",
        ),
    log:
        "logs/wp/uniform_table.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        reported=WP["jw_reported"],
    script:
        "../scripts/wp_uniform_table.py"


rule wp_diagnostic_table:
    input:
        get_wp_diagnostic_metrics(),
    output:
        report(
            "results/tables/wp/diagnostic_table.csv",
            caption="../report/wp/diagnostic_table.rst",
            category="Wiegreffe & Pinter",
            subcategory="tables",
        ),
    log:
        "logs/wp/diagnostic_table.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    script:
        "../scripts/wp_diagnostic_table.py"


rule wp_adversarial_table:
    input:
        adversaries=get_wp_adversarial_metrics(),
        base=wp_metrics("base"),
    output:
        report(
            "results/tables/wp/adversarial_table.csv",
            caption="../report/wp/adversarial_table.rst",
            category="Wiegreffe & Pinter",
            subcategory="tables",
        ),
    log:
        "logs/wp/adversarial_table.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    script:
        "../scripts/wp_adversarial_table.py"


rule wp_jsd_tvd_points:
    input:
        get_wp_points_inputs,
    output:
        report(
            "results/tables/wp/{dataset}/jsd_tvd_points.csv",
            caption="../report/wp/jsd_tvd_points.rst",
            category="Wiegreffe & Pinter",
            subcategory="{dataset}",
        ),
    log:
        "logs/wp/{dataset}/jsd_tvd_points.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        base=lambda wildcards: wp_base_files(wildcards.dataset),
        seeds=get_wp_seed_files,
        uniform=lambda wildcards: wp_run_files(wp_run_dir(wildcards.dataset, "uniform")),
        adversaries=lambda wildcards: get_wp_adversary_runs(wildcards.dataset),
        lambdas=lambda wildcards: wp_lambdas(wildcards.dataset),
        tvd_binary=WP["tvd_binary"],
        aggregation=WP["report_aggregation"],
        jw_adversary=lambda wildcards: wp_jw_adversary_file(wildcards.dataset),
    script:
        "../scripts/wp_jsd_tvd_points.py"


rule wp_jsd_tvd_figure:
    input:
        "results/tables/wp/{dataset}/jsd_tvd_points.csv",
    output:
        png=report(
            "results/figures/wp/{dataset}/jsd_tvd.png",
            caption="../report/wp/jsd_tvd.rst",
            category="Wiegreffe & Pinter",
            subcategory="{dataset}",
        ),
        pdf="results/figures/wp/{dataset}/jsd_tvd.pdf",
    log:
        "logs/wp/{dataset}/jsd_tvd_figure.log",
    conda:
        "../envs/attnexp.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    script:
        "../scripts/wp_jsd_tvd_figure.py"


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
