# Hugging Face encoders (config `hf`): each model re-tokenizes the grid datasets with its own tokenizer, is used
# as given or fine-tuned per dataset and seed, and goes through the A&Z analyses (rows `{dataset}@{hf_model}` in
# the A&Z tables) and the J&W tests without the adversary. A missing checkpoint stops at config validation.


rule hf_tokenize:
    input:
        **paths.preprocessed_files(),
    output:
        **paths.hf_preprocessed_files(),
    log:
        paths.log("hf", "{hf_model}/preprocessed/{dataset}"),
    wildcard_constraints:
        hf_model=HF_WILDCARDS["hf_model"],
        dataset=HF_WILDCARDS["dataset"],
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        config=config_sections("hf", "seeding", "model_selection"),
        raw_dir=get_raw_dir,
        user_files=config["data"]["user_files"],
        declaration=get_user_dataset,
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
        **HF_WILDCARDS,
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["train"]
    resources:
        **RESOURCES["heavy"],
        **GPU,
    params:
        config=config_sections(
            "hf", "seeding", "model_selection", "device", "fused_adam"
        ),
    script:
        "../scripts/hf_model.py"


rule hf_az:
    input:
        model=paths.hf_model_files()["model"],
        instances=paths.hf_preprocessed_files()["instances"],
    output:
        **paths.hf_az_files(),
    log:
        paths.log("hf", "{hf_model}/{dataset}/seed{seed}/az"),
    wildcard_constraints:
        **HF_WILDCARDS,
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **RESOURCES["heavy"],
        **GPU,
    params:
        config=config_sections("az", "device"),
        task=get_hf_task,
    script:
        "../scripts/hf_az.py"


rule hf_analyze:
    input:
        **paths.hf_preprocessed_files(),
        model=paths.hf_model_files()["model"],
    output:
        **paths.hf_analysis_files(),
    log:
        paths.log("hf", "{hf_model}/{dataset}/seed{seed}/jw"),
    wildcard_constraints:
        **HF_WILDCARDS,
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **RESOURCES["heavy"],
        **GPU,
    params:
        config=config_sections("analyses", "device"),
        batch_size=get_hf_analysis_batch_size,
    script:
        "../scripts/hf_analyze.py"


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
        hf_model=HF_WILDCARDS["hf_model"],
        dataset=HF_WILDCARDS["dataset"],
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        gradient=AZ["gradient"],
        task=get_hf_task,
        config=config_sections("figures"),
    script:
        "../scripts/hf_correlation_figure.py"


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
        **HF_WILDCARDS,
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        config=config_sections("figures"),
    script:
        "../scripts/az_cls_maps.py"


rule hf:
    input:
        get_hf_targets(),
    localrule: True
