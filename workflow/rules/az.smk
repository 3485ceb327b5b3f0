# Abnar & Zuidema (2020): a Transformer encoder, raw attention / rollout / flow at every layer against
# blank-out and input gradients (Spearman per example), and subject recovery on agreement data.


rule synthesize_agreement:
    output:
        data=paths.AGREEMENT,
    log:
        paths.log("raw/synthetic", "agreement"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.SynthesizeSettings, family="agreement"),
    script:
        "../scripts/synthesize.py"


rule linzen_agreement:
    input:
        corpus=get_linzen_path,
    output:
        data=paths.LINZEN_FILE,
    log:
        paths.log("raw", "linzen"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.SynthesizeSettings, family="linzen"),
    script:
        "../scripts/synthesize.py"


rule az_analyse:
    input:
        model=paths.model_files(encoder="transformer", attention=PLAN.az_attention)[
            "model"
        ],
        instances=paths.preprocessed_files()["instances"],
    output:
        **paths.az_files(),
        **(paths.az_erasure_files() if PLAN.erasure else {}),
    log:
        paths.log("az", "{dataset}/seed{seed}"),
    wildcard_constraints:
        **PLAN.az_wildcards(),
    priority: JOB_PRIORITY
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("az_analyse", "analysis"),
        settings=settings(job.AZAnalysisSettings),
    script:
        "../scripts/az_analyse.py"


rule az_combine:
    input:
        PLAN.az_run_summaries(),
    output:
        **paths.az_combined_files(),
    log:
        paths.log("az", "combine"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="az_combine"),
    script:
        "../scripts/az_combine.py"


rule az_tables:
    input:
        **paths.az_combined_files(),
    output:
        **{
            k: v
            for stem, title in catalog.titles("az", "table").items()
            for k, v in reported_table("az", stem, title, prefix=f"{stem}_").items()
        },
    log:
        paths.log("az", "tables"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="az_tables"),
    script:
        "../scripts/az_tables.py"


rule az_correlation_figure:
    input:
        summary=paths.az_combined_files()["summary"],
    output:
        **catalog_figure("az", "{dataset}/correlation_by_layer", "correlation_by_layer"),
    log:
        paths.log("az", "{dataset}/correlation_figure"),
    wildcard_constraints:
        dataset=PLAN.az_wildcards()["dataset"],
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="az_correlation_figure"),
    script:
        "../scripts/az_correlation_figure.py"


rule az_cls_maps:
    input:
        relevance=paths.az_files()["relevance"],
        meta=paths.preprocessed_files()["meta"],
    output:
        **catalog_figure(
            "az",
            "{dataset}/cls_maps_seed{seed}",
            "cls_maps",
            model=f"transformer-{PLAN.az_attention} seed {{seed}}",
        ),
    log:
        paths.log("az", "{dataset}/cls_maps_seed{seed}"),
    wildcard_constraints:
        **PLAN.az_wildcards(),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.FigureSettings, job="az_cls_maps"),
    script:
        "../scripts/az_cls_maps.py"


# A&Z Fig. 4, the pronoun examples (az.pronoun_examples) on every hf.models entry of kind masked_lm (explained at the
# mask) or prompted (a causal LM: at the token before the pronoun, the text after it dropped): the candidates' relative
# probabilities beside raw / rollout / flow from q at every layer, and the numbers drawn as a CSV beside the figure.
# Part of the `hf` target (and `all`) whenever such a model is configured, with or without hf.datasets.
rule az_pronouns:
    output:
        **catalog_figure(
            "az",
            "pronouns/{hf_model}/{example}",
            "pronouns",
            subcategory="Pronoun examples (Fig. 4)",
            model="{hf_model}",
        ),
        table=paths.az_pronoun_files()["table"],
    log:
        paths.log("az", "pronouns/{hf_model}/{example}"),
    wildcard_constraints:
        **PLAN.pronoun_wildcards(),
    conda:
        "../envs/attnexp.yaml"
    threads: THREADS["analysis"]
    resources:
        **JOB_RESOURCES,
        **GPU,
    params:
        torch_threads=torch_threads("az_pronouns", "analysis"),
        settings=settings(job.PronounSettings),
    script:
        "../scripts/az_pronouns.py"


rule az:
    input:
        PLAN.az_targets(),
    localrule: True
