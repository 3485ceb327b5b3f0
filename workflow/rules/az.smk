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
        **RESOURCES["small"],
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
        **RESOURCES["small"],
    params:
        seed=config["az"]["sample_seed"],
    script:
        "../scripts/az_linzen.py"


rule az_analyse:
    input:
        model=paths.model_files(encoder="transformer", attention=AZ_ATTENTION)["model"],
        instances=paths.preprocessed_files()["instances"],
    output:
        **paths.az_files(),
    log:
        paths.log("az", "{dataset}/seed{seed}"),
    wildcard_constraints:
        **AZ_WILDCARDS,
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **RESOURCES["heavy"],
        **GPU,
    params:
        config=config_sections("az", "device"),
    script:
        "../scripts/az_analyse.py"


rule az_combine:
    input:
        get_az_run_summaries(),
    output:
        **paths.az_combined_files(),
    log:
        paths.log("az", "combine"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        runs=get_az_runs(),
    script:
        "../scripts/az_combine.py"


rule az_tables:
    input:
        **paths.az_combined_files(),
    output:
        **az_table_outputs(),
    log:
        paths.log("az", "tables"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        gradient=AZ["gradient"],
    script:
        "../scripts/az_tables.py"


rule az_correlation_figure:
    input:
        summary=paths.az_combined_files()["summary"],
    output:
        **reported_figure(
            "az",
            paths.figure_files("az", AZ_FIGURES["correlation_by_layer"]),
            "correlation_by_layer",
            "Spearman's rho by layer",
        ),
    log:
        paths.log("az", "{dataset}/correlation_figure"),
    wildcard_constraints:
        dataset=AZ_WILDCARDS["dataset"],
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        gradient=AZ["gradient"],
        config=config_sections("figures"),
    script:
        "../scripts/az_correlation_figure.py"


rule az_cls_maps:
    input:
        relevance=paths.az_files()["relevance"],
        meta=paths.preprocessed_files()["meta"],
    output:
        **reported_figure(
            "az",
            paths.figure_files("az", AZ_FIGURES["cls_maps"]),
            "cls_maps",
            "[CLS] maps across layers",
            model=f"transformer-{AZ_ATTENTION} seed {{seed}}",
        ),
    log:
        paths.log("az", "{dataset}/cls_maps_seed{seed}"),
    wildcard_constraints:
        **AZ_WILDCARDS,
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        config=config_sections("figures"),
    script:
        "../scripts/az_cls_maps.py"


rule az:
    input:
        get_az_targets(),
    localrule: True
