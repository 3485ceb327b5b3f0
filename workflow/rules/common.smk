# The grid, wildcard constraints, resource presets and input functions (get_*) shared by every stage.
# Policy lives in the library (attnexp.datasets.policy: usable datasets, raw files, hyperparameters, word
# vectors) and every path in attnexp.paths; a ConfigError from either stops the workflow before any job runs.
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from attnexp import paths
from attnexp.config import ConfigError, validate_config
from attnexp.datasets import DATASETS, get_dataset, policy
from attnexp.datasets.acquire import DOWNLOADS
from attnexp.datasets.generated.synthetic import FAMILY_FILES
from attnexp.models import names
from attnexp.models.device import gpu_jobs

try:
    validate_config(
        config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
    )
except ConfigError as err:
    raise WorkflowError(
        f"{err}\nFix config/config.yaml (or the file given with --configfile)."
    ) from None


def get_available_datasets(names, allow_empty=False):
    """`names` without the datasets whose raw data is missing (data.on_missing: skip), or stop (fail)."""
    try:
        return policy.check_datasets_available(
            names, DATA, workflow.basedir, allow_empty=allow_empty
        )
    except ConfigError as err:
        raise WorkflowError(str(err)) from None


DATA = config["data"]
DATASET_NAMES = get_available_datasets(config["datasets"])
ENCODERS = config["encoders"]
ATTENTIONS = config["attentions"]
SEEDS = config["seeds"]


wildcard_constraints:
    dataset="|".join(sorted(DATASETS)),
    encoder="|".join([*names.ENCODERS, names.TRANSFORMER_ENCODER]),
    attention="|".join([*names.ATTENTIONS, *names.TRANSFORMER_ATTENTIONS]),
    seed=r"\d+",


# What a job asks the scheduler for (mem_mb in MB, runtime in minutes): `resources: **RESOURCES["small"]`.
# Generated data is tiny, real corpora (IMDB, SNLI, CNN) need more; `attempt` (1, 2, ...) grows the request
# on each retry, so a job killed for memory or time succeeds on resubmission (retries: in profiles/slurm).
def _by_data(generated, real):
    """A request that depends on the {dataset} wildcard's kind of data and grows with each attempt."""

    def request(wildcards, attempt):
        synthetic = get_dataset(wildcards.dataset).synthetic is not None
        return (generated if synthetic else real) * attempt

    return request


RESOURCES = {
    "tiny": {"mem_mb": 500, "runtime": 5},  # generators, converters
    "small": {"mem_mb": 2000, "runtime": 20},  # tables, figures, per-dataset summaries
    "analysis": {"mem_mb": 2000, "runtime": 60},  # per-model analyses, W&P runs
    "heavy": {"mem_mb": 3000, "runtime": 120},  # Transformer, consistent adversaries
    "download": {"mem_mb": 1000, "runtime": 60},
    "preprocess": {"mem_mb": _by_data(1000, 8000), "runtime": _by_data(10, 120)},
    "train": {"mem_mb": _by_data(2000, 8000), "runtime": _by_data(30, 720)},
}


# GPU-capable jobs (training, the J&W and A&Z analyses, the W&P runs) declare `resources: **GPU`: gpu=1 when
# `device` resolves to CUDA here (or `gpu_jobs: true`), so `--resources gpu=1` runs them one at a time and
# profiles/slurm sends exactly them to a GPU partition; nothing on a CPU-only machine. `device: cuda` without
# a GPU stops here, before any job. THREADS: `threads:` per kind of job (config `threads`).
try:
    GPU = {"gpu": 1} if gpu_jobs(config["device"], config["gpu_jobs"]) else {}
except ConfigError as err:
    raise WorkflowError(
        f"{err}\nFix config/config.yaml (or the file given with --configfile)."
    ) from None
THREADS = config["threads"]


# Report entries (snakemake --report): category = the paper, subcategory = the dataset (or "All datasets"),
# labels = the model first, then the table or figure. Snakemake sorts categories, subcategories and entries by
# name, so sections carry the papers' order as a number (attnexp.report.order). Tables enter as their HTML page
# (shown inline; a CSV would only be offered for download). `report(` at the start of a line would parse as the
# global `report:` directive, hence the alias.
from attnexp.report.order import ALL_DATASETS, PAPER_SECTIONS, dataset_sections

in_report = report
PAPER_NAMES = PAPER_SECTIONS


def report_section(subcategory):
    """The report subcategory of `subcategory`: "All datasets" or a dataset name, or "{dataset}" (a wildcard),
    numbered in the papers' dataset order over every dataset of this run."""

    def section(wildcards):
        name = (
            subcategory.format(**dict(wildcards.items()))
            if "{" in subcategory
            else subcategory
        )
        sections = dataset_sections([*DATASET_NAMES, *WP_DATASETS, *AZ_DATASETS])
        return sections.get(name, name)

    return section


def reported_table(paper, stem, title, subcategory=ALL_DATASETS, model="-"):
    """A table's CSV, Markdown, LaTeX and HTML; the HTML is its report entry (caption workflow/report/{paper}/)."""
    files = paths.table_files(paper, stem)
    files["html"] = in_report(
        files["html"],
        caption=f"../report/{paper}/{stem.rsplit('/', 1)[-1]}.rst",
        category=PAPER_NAMES[paper],
        subcategory=report_section(subcategory),
        labels={"model": model, "result": title},
    )
    return files


def reported_figure(paper, files, caption, title, subcategory="{dataset}", model="-"):
    """A figure's PNG and PDF; the PNG is its report entry (caption workflow/report/{paper}/{caption}.rst)."""
    png = in_report(
        files["png"],
        caption=f"../report/{paper}/{caption}.rst",
        category=PAPER_NAMES[paper],
        subcategory=report_section(subcategory),
        labels={"model": model, "result": title},
    )
    return {"png": png, "pdf": files["pdf"]}


def prefixed(prefix, files):
    """Named outputs `{prefix}_{format}` for a rule that writes several tables or figures."""
    return {f"{prefix}_{fmt}": path for fmt, path in files.items()}


def config_sections(*keys):
    """The config sections a job builds its settings from (`params: config=`), so that a change reruns it."""
    return {key: config[key] for key in keys}


def grid(pattern, **extra):
    """Expand `pattern` over datasets x encoders x attentions x seeds."""
    return expand(
        pattern,
        dataset=DATASET_NAMES,
        encoder=ENCODERS,
        attention=ATTENTIONS,
        seed=SEEDS,
        **extra,
    )


def get_raw_dir(wildcards):
    return policy.raw_dir(get_dataset(wildcards.dataset), DATA, workflow.basedir)


def get_raw_files(wildcards):
    """What preprocessing waits for: a generated family's folder (rule synthesize), or the raw files."""
    spec = get_dataset(wildcards.dataset)
    if spec.synthetic in FAMILY_FILES:
        return paths.SYNTHETIC.format(family=spec.synthetic)
    return policy.raw_input_files(spec, DATA, workflow.basedir)


def get_user_dataset(wildcards):
    """The config's declaration of a dataset from `user_datasets` ({} for a built-in dataset)."""
    return config["user_datasets"].get(wildcards.dataset, {})


def get_synthetic_options(wildcards):
    return config["synthetic"][wildcards.family]


def get_download_outputs(archive):
    """The files (and folders) the download rule of one archive extracts into resources/raw."""
    return [
        (
            directory(f"{paths.DOWNLOADED}/{out[:-1]}")
            if out.endswith("/")
            else f"{paths.DOWNLOADED}/{out}"
        )
        for out in DOWNLOADS[archive].outputs
    ]


def get_hyperparameters(wildcards):
    return policy.hyperparameters(wildcards.dataset, config["hyperparameters"])


def get_embeddings(wildcards):
    return policy.embeddings(wildcards.dataset, DATA)


def get_datasets_targets():
    return expand(paths.preprocessed_files()["meta"], dataset=DATASET_NAMES)


def get_model_targets():
    return grid(paths.model_files()["metrics"])


def get_all_targets():
    targets = get_model_targets() + get_datasets_targets()
    targets += get_analyses_targets()
    targets += get_az_targets()
    targets += get_hf_targets()
    targets += get_wp_targets()

    targets += get_figures_targets()
    return targets


# --- analyses ---


def get_analysis_batch_size(wildcards):
    """J&W analyse the test set in batches of the training batch size."""
    return get_hyperparameters(wildcards)["batch_size"]


def get_analyses_targets():
    return grid(paths.analysis_files()["kendall_summary"])


# --- transformer (Abnar & Zuidema) ---
AZ = config["az"]
AZ_DATASETS = get_available_datasets(AZ["datasets"], allow_empty=True) + (
    ["linzen_agreement"] if AZ["linzen_path"] else []
)
AZ_SEEDS = AZ["seeds"]
AZ_WILDCARDS = {
    "dataset": "|".join(map(re.escape, AZ_DATASETS)) or "none",
    "seed": r"\d+",
}
# the Transformer the A&Z analyses read (standard blocks unless az.tied_cls_attention); the J&W analyses
# swap one [CLS] distribution and always read the tied variant
AZ_ATTENTION = (
    names.TRANSFORMER_TIED_ATTENTION
    if AZ["tied_cls_attention"]
    else names.TRANSFORMER_ATTENTION
)
# table stem -> report title; the stems are attnexp.report.az.TABLES
AZ_TABLES = {
    "correlations": "Spearman's rho by layer",
    "subject_recovery": "Subject found by relevance",
    "importance_recovery": "Subject found by importance",
}
# figure stems under results/figures/az/: rho by layer per dataset, [CLS] maps per model
AZ_FIGURES = {
    "correlation_by_layer": "{dataset}/correlation_by_layer",
    "cls_maps": "{dataset}/cls_maps_seed{seed}",
}


def get_linzen_path(wildcards):
    path = AZ["linzen_path"]
    if not path:
        raise WorkflowError(
            "dataset linzen_agreement needs the Linzen et al. corpus: set az.linzen_path "
            "to agr_50_mostcommon_10K.tsv(.gz) from the rnn_agreement release"
        )
    return path


def get_az_runs(wildcards=None):
    """Every analysed (dataset, seed) with its files: one list, so inputs and labels cannot disagree.
    Hugging Face runs (hf.smk) join under the label `{dataset}@{hf_model}`."""
    return [
        {"dataset": d, "seed": int(s), **paths.az_files(d, s)}
        for d in AZ_DATASETS
        for s in AZ_SEEDS
    ] + [
        {"dataset": paths.hf_task(m, d), "seed": int(s), **paths.hf_az_files(m, d, s)}
        for m, d, s in HF_RUNS
    ]


def get_az_run_summaries(wildcards=None):
    return [run[key] for run in get_az_runs() for key in ("summary", "recovery")]


def az_table_outputs():
    """Every A&Z table as `{stem}_{format}`, in the report under "All datasets"."""
    outputs = {}
    for stem, title in AZ_TABLES.items():
        outputs |= prefixed(stem, reported_table("az", stem, title))
    return outputs


def get_az_table_targets():
    if not AZ_DATASETS and not HF_RUNS:
        return []
    return [f for stem in AZ_TABLES for f in paths.table_files("az", stem).values()]


def get_az_figure_targets():
    if not AZ_DATASETS:
        return []
    stems = [AZ_FIGURES["correlation_by_layer"].format(dataset=d) for d in AZ_DATASETS]
    stems += [
        AZ_FIGURES["cls_maps"].format(dataset=d, seed=s)
        for d in AZ_DATASETS
        for s in AZ_SEEDS
    ]
    return [f for stem in stems for f in paths.figure_files("az", stem).values()]


def get_az_targets():
    if not AZ_DATASETS:
        return []
    runs = [(d, s) for d in AZ_DATASETS for s in AZ_SEEDS]
    models = [
        paths.model_files(d, "transformer", AZ_ATTENTION, s)["metrics"] for d, s in runs
    ]
    jw = [
        paths.analysis_files(d, "transformer", names.TRANSFORMER_TIED_ATTENTION, s)[
            "kendall_summary"
        ]
        for d, s in (runs if AZ["jw_analyses"] else [])
    ]
    return [
        *models,
        *jw,
        *paths.az_combined_files().values(),
        *get_az_table_targets(),
        *get_az_figure_targets(),
    ]


# --- Hugging Face models (hf.smk): results/hf/{hf_model}/..., A&Z rows labelled {dataset}@{hf_model} ---
HF = config["hf"]
HF_MODELS = list(HF["models"]) if HF["datasets"] else []
HF_DATASETS = get_available_datasets(HF["datasets"]) if HF_MODELS else []
HF_RUNS = [(m, d, int(s)) for m in HF_MODELS for d in HF_DATASETS for s in HF["seeds"]]
HF_WILDCARDS = {
    "hf_model": "|".join(map(re.escape, HF_MODELS)) or "none",
    "dataset": "|".join(map(re.escape, HF_DATASETS)) or "none",
    "seed": r"\d+",
}


def get_hf_task(wildcards):
    return paths.hf_task(wildcards.hf_model, wildcards.dataset)


def get_hf_analysis_batch_size(wildcards):
    """J&W analyse in batches of the training batch size: the model's hf train batch size."""
    model = HF["models"][wildcards.hf_model]
    return model.get("train", {}).get("batch_size", HF["train"]["batch_size"])


def get_hf_targets():
    targets = []
    for m, d, s in HF_RUNS:
        targets += [
            paths.hf_model_files(m, d, s)["metrics"],
            paths.hf_az_files(m, d, s)["summary"],
        ]
        if HF["jw_analyses"]:
            targets.append(paths.hf_analysis_files(m, d, s)["kendall_summary"])
        targets += paths.figure_files(
            "az", paths.hf_figure_stem("cls_maps", m, d, s)
        ).values()
    for m in HF_MODELS:
        for d in HF_DATASETS:
            stem = paths.hf_figure_stem("correlation_by_layer", m, d)
            targets += paths.figure_files("az", stem).values()
    return targets + (get_az_table_targets() if HF_RUNS else [])


# --- figures: J&W tables and figures; the targets across papers for report.smk ---
from attnexp.report.jw.catalog import (
    FIGURE_TITLES,
    MODEL_FIGURE_TABLES,
    SUMMARY_FIGURE_NAMES,
    TABLE_TITLES,
)

FIGURES = config["figures"]
MODEL_FIGURE_NAMES = FIGURES["per_model"]
SUMMARY_FIGURES = FIGURES["summary"]
JW_TABLES = list(TABLE_TITLES)


def grid_models(datasets=None):
    """The grid as label dicts (dataset, encoder, attention, seed), in one fixed order for inputs and params."""
    return [
        {"dataset": d, "encoder": e, "attention": a, "seed": int(s)}
        for d in (datasets or DATASET_NAMES)
        for e in ENCODERS
        for a in ATTENTIONS
        for s in SEEDS
    ]


def figure_models(datasets=None):
    """Models that get per-model figures in the aggregate targets (config figures.models; "all" = the grid)."""
    chosen = FIGURES["models"]
    return [
        m
        for m in grid_models(datasets)
        if "all" in chosen or f"{m['encoder']}-{m['attention']}" in chosen
    ]


def bootstrap_options():
    return dict(FIGURES["bootstrap"])


def model_tables(model, tables):
    """Paths of the analysis tables `tables` of one model (`instances` = the preprocessed instances)."""
    files = paths.analysis_files(
        model["dataset"], model["encoder"], model["attention"], model["seed"]
    )
    found = {t: files[t] for t in tables if t != "instances"}
    if "instances" in tables:
        found["instances"] = paths.preprocessed_files(model["dataset"])["instances"]
    return found


def needed_tables(names):
    return sorted({t for name in names for t in MODEL_FIGURE_TABLES[name]})


def model_label(model):
    return f"{model['encoder']}-{model['attention']} seed {model['seed']}"


def jw_model_figure(model, name):
    return paths.jw_model_figure_files(
        model["dataset"], model["encoder"], model["attention"], model["seed"], name
    )


def get_dataset_figure_models(wildcards):
    """Params of dataset_figures: each figure model's labels, analysis tables and figure paths."""
    tables = needed_tables(MODEL_FIGURE_NAMES)
    return [
        {
            **m,
            **model_tables(m, tables),
            "figures": {name: jw_model_figure(m, name) for name in MODEL_FIGURE_NAMES},
        }
        for m in figure_models([wildcards.dataset])
    ]


def get_dataset_figure_inputs(wildcards):
    tables = needed_tables(MODEL_FIGURE_NAMES)
    return sorted(
        {
            p
            for m in figure_models([wildcards.dataset])
            for p in model_tables(m, tables).values()
        }
    )


def wildcard_model(wildcards):
    return {
        "dataset": wildcards.dataset,
        "encoder": wildcards.encoder,
        "attention": wildcards.attention,
        "seed": int(wildcards.seed),
    }


def get_model_figure_models(wildcards, output):
    model = wildcard_model(wildcards)
    tables = model_tables(model, MODEL_FIGURE_TABLES[wildcards.figure])
    figures = {wildcards.figure: {"png": output.png, "pdf": output.pdf}}
    return [{**model, **tables, "figures": figures}]


def get_model_figure_inputs(wildcards):
    model = wildcard_model(wildcards)
    return list(model_tables(model, MODEL_FIGURE_TABLES[wildcards.figure]).values())


def get_model_figure_labels(wildcards):
    return {
        "model": model_label(wildcard_model(wildcards)),
        "result": FIGURE_TITLES[wildcards.figure],
    }


def get_summary_figure_labels(wildcards):
    title = FIGURE_TITLES[wildcards.summary_figure]
    return {"model": "-", "result": f"{title} ({wildcards.attention} attention)"}


def not_drawn_by(tails, alternatives):
    """A wildcard constraint: `alternatives`, unless the rest of the path is one of `tails` (a negative lookahead).

    The single-figure rules take it on their first wildcard of the varying part, so that they never match a
    figure that an aggregate job draws: each figure has exactly one producing rule, without a rule order.
    """
    if not tails:
        return alternatives
    excluded = "|".join(re.escape(tail) for tail in sorted(tails))
    return rf"(?!(?:{excluded})\.(?:png|pdf)$)(?:{alternatives})"


def single_model_figure_encoder():
    """`encoder` of model_figure: every encoder, except for the figures a dataset_figures job draws."""
    tails = {
        f"{m['encoder']}-{m['attention']}/seed{m['seed']}/{name}"
        for m in figure_models(["{dataset}"])
        for name in MODEL_FIGURE_NAMES
    }
    return not_drawn_by(tails, "lstm|cnn|average|transformer")


def single_summary_figure_attention():
    """`attention` of summary_figure: every attention, except for the figures the summary_figures job draws."""
    tails = {f"{a}/{name}" for a in ATTENTIONS for name in SUMMARY_FIGURES}
    return not_drawn_by(tails, "tanh|dot|uniform|self")


def model_figure_outputs():
    """Every per-model figure of one dataset ({dataset} left as a wildcard); PNGs go into the report."""
    outputs = []
    for m in figure_models(["{dataset}"]):
        for name in MODEL_FIGURE_NAMES:
            files = jw_model_figure(m, name)
            title = FIGURE_TITLES[name]
            outputs += reported_figure(
                "jw", files, name, title, model=model_label(m)
            ).values()
    return outputs


def get_summary_figure_files():
    """Params of summary_figures: attention -> figure name -> {png, pdf}."""
    return {
        a: {name: paths.jw_summary_figure_files(a, name) for name in SUMMARY_FIGURES}
        for a in ATTENTIONS
    }


def summary_figure_outputs():
    outputs = []
    for attention, by_name in get_summary_figure_files().items():
        for name, files in by_name.items():
            title = f"{FIGURE_TITLES[name]} ({attention} attention)"
            outputs += reported_figure("jw", files, name, title, ALL_DATASETS).values()
    return outputs


def get_jw_table_targets():
    return [f for stem in JW_TABLES for f in paths.table_files("jw", stem).values()]


def get_jw_figure_targets():
    """Manifests: each stands for one batch job that draws all figures of a dataset (or the summary)."""
    return [paths.figure_manifest("jw", d) for d in DATASET_NAMES] + [
        paths.figure_manifest("jw", "summary")
    ]


def get_jw_targets():
    return get_analyses_targets() + get_jw_table_targets() + get_jw_figure_targets()


def get_table_targets():
    """Every table of the three papers (CSV + Markdown + LaTeX)."""
    return (
        get_jw_table_targets()
        + get_wp_table_targets()
        + get_az_table_targets()
        + get_comparison_table_targets()
    )


def get_figure_targets():
    """Every figure of the three papers (J&W through the manifests of its batch jobs)."""
    return get_jw_figure_targets() + get_wp_figure_targets() + get_az_figure_targets()


def get_figures_targets():
    return get_table_targets() + get_figure_targets()


# --- wp ---
# Wiegreffe & Pinter (2019): runs under results/wp/{dataset}/{variant}/seed{seed}[/lambda{lam}] (attnexp.paths);
# tables under results/tables/wp/, figures under results/figures/wp/{dataset}/.
from attnexp.analyses.wp.settings import ADVERSARY_VARIANT, VARIANTS, WPSettings

WP = WPSettings.from_config(config)
WP_DATASETS = get_available_datasets(list(WP.datasets)) if WP.datasets else []
WP_BASE_MODEL = f"{'-'.join(VARIANTS['base'])} seed {WP.base_seed}"
WP_LAMBDA_LABELS = WP.lambda_labels(WP_DATASETS)


wildcard_constraints:
    variant="|".join(VARIANTS),
    lam="|".join(re.escape(x) for x in WP_LAMBDA_LABELS) or "none",


def get_wp_run_files(dataset, variant, seed=None, lam=None):
    """One W&P run's files (at the base seed unless `seed` is given)."""
    return paths.wp_run_files(
        dataset, variant, WP.base_seed if seed is None else seed, lam
    )


def get_wp_base(wildcards):
    """The base run's files (model, metrics, stored outputs) of the wildcards' dataset."""
    return get_wp_run_files(wildcards.dataset, "base")


def get_wp_train_inputs(wildcards):
    """Preprocessed data, plus the donor run's stored attention for frozen-guide MLPs."""
    inputs = paths.preprocessed_files(wildcards.dataset)
    if wildcards.variant == "mlp_base":
        donor = get_wp_base(wildcards)
    elif wildcards.variant == "mlp_adv":
        lam = WP.diag_lambda_for(wildcards.dataset)
        donor = get_wp_run_files(wildcards.dataset, ADVERSARY_VARIANT, lam=lam)
    else:
        return inputs
    return {**inputs, **{k: v for k, v in donor.items() if k.endswith("_attention")}}


def get_wp_adversary_inputs(wildcards):
    return {**paths.preprocessed_files(wildcards.dataset), **get_wp_base(wildcards)}


def get_wp_metrics(variant):
    """The metrics of one variant's base-seed run on every W&P dataset."""
    return [get_wp_run_files(d, variant)["metrics"] for d in WP_DATASETS]


def get_wp_seed_files(wildcards):
    return [get_wp_run_files(wildcards.dataset, "base", seed=s) for s in WP.seeds]


def get_wp_adversary_runs(wildcards):
    """The consistent adversaries of one dataset, in the order of its lambda sweep."""
    return [
        get_wp_run_files(wildcards.dataset, ADVERSARY_VARIANT, lam=x)
        for x in WP.lambdas_for(wildcards.dataset)
    ]


def get_wp_uniform_files(wildcards):
    return get_wp_run_files(wildcards.dataset, "uniform")


def get_wp_jw_adversary(wildcards):
    """J&W's per-instance adversary on the base model, or None when wp.jw_adversary_runs is 0."""
    if not WP.jw_adversary_runs:
        return None
    return paths.wp_jw_adversary_file(wildcards.dataset, WP.base_seed)


def _test_files(runs):
    return {run[k] for run in runs for k in ("test_predictions", "test_attention")}


def get_wp_seed_variance_inputs(wildcards):
    runs = [get_wp_base(wildcards), *get_wp_seed_files(wildcards)]
    return sorted(_test_files(runs))


def get_wp_adversary_variance_inputs(wildcards):
    return [
        *sorted(_test_files([get_wp_base(wildcards)])),
        get_wp_jw_adversary(wildcards),
    ]


def get_wp_points_inputs(wildcards):
    runs = [
        get_wp_base(wildcards),
        get_wp_uniform_files(wildcards),
        *get_wp_seed_files(wildcards),
        *get_wp_adversary_runs(wildcards),
    ]
    files = _test_files(runs) | {run["metrics"] for run in runs}
    jw_adversary = get_wp_jw_adversary(wildcards)
    return sorted(files | ({jw_adversary} if jw_adversary else set()))


def get_wp_diagnostic_metrics(wildcards=None):
    return [
        get_wp_run_files(d, variant)["metrics"]
        for d in WP_DATASETS
        for variant in WP.guide_variants()
    ]


def get_wp_adversarial_metrics(wildcards=None):
    return [
        get_wp_run_files(d, ADVERSARY_VARIANT, lam=x)["metrics"]
        for d in WP_DATASETS
        for x in WP.lambdas_for(d)
    ]


def wp_figure_outputs(name, stem, caption, title):
    """A W&P figure of one dataset ({dataset} a wildcard) as `{name}_png` (in the report) and `{name}_pdf`."""
    files = paths.figure_files("wp", f"{{dataset}}/{stem}")
    return prefixed(
        name, reported_figure("wp", files, caption, title, model=WP_BASE_MODEL)
    )


def _wp_tables(stems):
    return [path for stem in stems for path in paths.table_files("wp", stem).values()]


def _wp_figures(stems):
    return [
        path
        for d in WP_DATASETS
        for stem in stems
        for path in paths.figure_files("wp", f"{d}/{stem}").values()
    ]


def get_wp_uniform_targets():
    return _wp_tables(["uniform_table"]) if WP_DATASETS else []


def get_wp_seed_targets():
    kinds = ["seed", "adv"] if WP.jw_adversary_runs else ["seed"]
    return _wp_figures([f"{k}_{f}" for k in kinds for f in ("violin", "scatter")])


def get_wp_diagnostic_targets():
    return _wp_tables(["diagnostic_table"]) if WP_DATASETS and WP.guides else []


def get_wp_adversarial_targets():
    if not WP_DATASETS:
        return []
    points = [f"{d}/jsd_tvd_points" for d in WP_DATASETS]
    return _wp_tables(["adversarial_table", *points]) + _wp_figures(["jsd_tvd"])


def get_wp_table_targets():
    """Every W&P table (CSV, Markdown, LaTeX)."""
    return [
        path
        for path in get_wp_targets()
        if path.startswith(paths.TABLES.format(paper="wp"))
    ]


def get_wp_figure_targets():
    """Every W&P figure (PNG, PDF)."""
    return [
        path
        for path in get_wp_targets()
        if path.startswith(paths.FIGURES.format(paper="wp"))
    ]


def get_wp_targets():
    return [
        *get_wp_uniform_targets(),
        *get_wp_seed_targets(),
        *get_wp_diagnostic_targets(),
        *get_wp_adversarial_targets(),
    ]


# --- ours beside the published values (attnexp.report.comparison) ---
# Only datasets the papers report on (or their fallback variants) are compared: a grid of generated data gives an
# empty table and needs no input. Ours come from the same run files as the papers' tables (W&P: the base seed).
from attnexp.report.published import compared as compared_models


def get_paper_comparison_runs(wildcards=None):
    """The run files behind every published number this grid can match (params of paper_comparison)."""
    jw = compared_models(DATASET_NAMES, "jw")
    jw_models = [
        {
            **m,
            **{
                k: paths.model_files(
                    m["dataset"], m["encoder"], m["attention"], m["seed"]
                )[k]
                for k in ("metrics", "config")
            },
            "kendall": model_tables(m, ["kendall"])["kendall"],
        }
        for m in (grid_models(list(jw)) if jw else [])  # grid_models([]): all datasets
        if f"{m['encoder']}-{m['attention']}" in jw[m["dataset"]]
    ]
    wp_runs = [
        {
            "dataset": d,
            "variant": v,
            "seed": WP.base_seed,
            **{k: get_wp_run_files(d, v)[k] for k in ("metrics", "config")},
        }
        for d in compared_models(WP_DATASETS, "wp")
        for v in ("base", "uniform")
    ]
    az = compared_models(AZ_DATASETS, "az")
    az_runs = [
        {"dataset": r["dataset"], "seed": r["seed"], "summary": r["summary"]}
        for r in get_az_runs()
        if r["dataset"] in az
    ]
    datasets = {r["dataset"] for r in [*jw_models, *wp_runs, *az_runs]}
    metas = {d: paths.preprocessed_files(d)["meta"] for d in sorted(datasets)}
    return {
        "metas": metas,
        "jw_models": jw_models,
        "wp_runs": wp_runs,
        "az_runs": az_runs,
    }


def get_paper_comparison_inputs(wildcards=None):
    runs = get_paper_comparison_runs()
    files = list(runs["metas"].values())
    for kind, keys in (
        ("jw_models", ("metrics", "config", "kendall")),
        ("wp_runs", ("metrics", "config")),
        ("az_runs", ("summary",)),
    ):
        files += [run[k] for run in runs[kind] for k in keys]
    return files


def get_comparison_table_targets():
    return list(paths.paper_comparison_files().values())
