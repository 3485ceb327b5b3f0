# Helpers shared by every stage: config validation, the grid, wildcard constraints, input functions.
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from attnexp.config import ConfigError, validate_config
from attnexp.datasets import DATASETS, get_dataset

try:
    validate_config(
        config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
    )
except ConfigError as err:
    raise WorkflowError(
        f"{err}\nFix config/config.yaml (or the file given with --configfile)."
    ) from None


DATASET_NAMES = config["datasets"]
ENCODERS = config["encoders"]
ATTENTIONS = config["attentions"]
SEEDS = config["seeds"]
SYNTHETIC_FAMILIES = sorted(
    {get_dataset(d).synthetic for d in DATASET_NAMES if get_dataset(d).synthetic}
)


wildcard_constraints:
    dataset="|".join(sorted(DATASETS)),
    encoder="lstm|cnn|average|transformer",
    attention="tanh|dot|uniform|self",
    seed=r"\d+",
    family="sentiment|nli|babi",


def model_dir(dataset, encoder, attention, seed):
    return f"results/models/{dataset}/{encoder}-{attention}/seed{seed}"


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
    spec = get_dataset(wildcards.dataset)
    if spec.synthetic:
        return f"results/raw/synthetic/{spec.synthetic}"
    if "raw_dir" in spec.extra:
        return spec.extra["raw_dir"]
    return raw_root()


def get_raw_files(wildcards):
    spec = get_dataset(wildcards.dataset)
    if spec.synthetic or "raw_dir" in spec.extra:
        return [f"{get_raw_dir(wildcards)}/{name}" for name in spec.raw_files]
    return raw_input_files(spec)


def get_hyperparameters(wildcards):
    spec = get_dataset(wildcards.dataset)
    values = {
        "epochs": spec.epochs,
        "batch_size": spec.batch_size,
        "embedding_dim": spec.embedding_dim,
        "hidden_size": spec.hidden_size,
    }
    values.update(config["hyperparameters"].get(wildcards.dataset, {}))
    return values


def get_model_targets():
    return grid(
        "results/models/{dataset}/{encoder}-{attention}/seed{seed}/metrics.json"
    )


def get_all_targets():
    targets = get_model_targets() + get_datasets_targets()
    targets += get_analyses_targets()
    targets += get_az_targets()
    targets += get_wp_targets()

    targets += get_figures_targets()
    return targets


# --- datasets ---
import os

from attnexp.datasets.acquire import DOWNLOADS, find_layout, missing_data

DATA = config["data"]


def raw_root():
    """The configured local raw-data directory, or resources/raw where the download rules extract."""
    if DATA["raw_data_dir"] is None:
        return "resources/raw"
    path = Path(os.path.expandvars(str(DATA["raw_data_dir"])))
    return str(path if path.is_absolute() else Path(workflow.basedir) / path)


def raw_input_files(spec):
    """The raw files a real dataset's preprocessing reads (user files, local layout, or download outputs)."""
    if spec.user_files:
        return [str(p) for p in DATA["user_files"][spec.user_group].values() if p]
    root = raw_root()
    layout = find_layout(spec, root) if DATA["raw_data_dir"] is not None else "official"
    return [f"{root}/{rel}" for rel in spec.layouts[layout or "official"].values()]


def check_datasets_available(names):
    """Drop (on_missing: skip) or refuse (fail) datasets whose raw data is missing, before any job runs."""
    if all(get_dataset(n).synthetic for n in names):
        return names
    local = raw_root() if DATA["raw_data_dir"] is not None else None
    if local is not None and not Path(local).is_dir():
        raise WorkflowError(
            f"data.raw_data_dir={DATA['raw_data_dir']!r} is not a directory ({local}); point it at a copy of "
            "../shared/data or at the extracted official archives, or set it to null to download."
        )
    problems = {}
    for name in names:
        spec = get_dataset(name)
        if not spec.synthetic:
            problem = missing_data(spec, local, DATA["user_files"])
            if problem:
                problems[name] = problem
    if not problems:
        return names
    listing = "\n  - ".join(problems.values())
    if DATA["on_missing"] == "skip":
        kept = [n for n in names if n not in problems]
        print(
            f"Skipping {len(problems)} dataset(s) without raw data:\n  - {listing}",
            file=sys.stderr,
        )
        if not kept:
            raise WorkflowError(
                "no dataset in the grid has its raw data; see the messages above"
            )
        return kept
    raise WorkflowError(
        f"raw data missing for {len(problems)} dataset(s) in the grid:\n  - {listing}\n"
        "Provide the files, remove the datasets from `datasets`, or set data.on_missing: skip."
    )


DATASET_NAMES = check_datasets_available(DATASET_NAMES)


def download_outputs(name):
    return [
        (
            directory(f"resources/raw/{out[:-1]}")
            if out.endswith("/")
            else f"resources/raw/{out}"
        )
        for out in DOWNLOADS[name].outputs
    ]


def get_embeddings(wildcards):
    """The pretrained word vectors of a dataset: its config key, the file (None: random init) and OOV policy."""
    spec = get_dataset(wildcards.dataset)
    if spec.embeddings is None:
        return {}
    path = DATA["embeddings"][spec.embeddings]
    return {
        "source": spec.embeddings,
        "path": path,
        "missing": "normal" if spec.embeddings == "mimic_w2v" else "zero",
    }


def get_datasets_targets():
    return expand("results/preprocessed/{dataset}/meta.json", dataset=DATASET_NAMES)


# --- slurm ---
# What each heavy job asks the scheduler for (mem_mb in MB, runtime in minutes). Embedded synthetic data is
# tiny; real corpora (IMDB, SNLI, CNN) need more. `attempt` (1, 2, ...) grows the request on each retry, so
# a job killed for memory or time succeeds on resubmission (retries: in profiles/slurm).


def _is_synthetic(wildcards):
    return get_dataset(wildcards.dataset).synthetic is not None


def get_preprocess_mem_mb(wildcards, attempt):
    return (1000 if _is_synthetic(wildcards) else 8000) * attempt


def get_preprocess_runtime(wildcards, attempt):
    return (10 if _is_synthetic(wildcards) else 120) * attempt


def get_train_mem_mb(wildcards, attempt):
    return (2000 if _is_synthetic(wildcards) else 8000) * attempt


def get_train_runtime(wildcards, attempt):
    return (30 if _is_synthetic(wildcards) else 720) * attempt


# --- analyses ---
def get_analysis_batch_size(wildcards):
    """J&W analyse the test set in batches of the training batch size."""
    return get_hyperparameters(wildcards)["batch_size"]


def get_analyses_targets():
    return grid(
        "results/analyses/{dataset}/{encoder}-{attention}/seed{seed}/kendall_summary.csv"
    )


# --- transformer (Abnar & Zuidema) ---
from attnexp import paths

AZ = config["az"]
AZ_DATASETS = AZ["datasets"] + (["linzen_agreement"] if AZ["linzen_path"] else [])
AZ_SEEDS = AZ["seeds"]
AZ_CATEGORY = "Abnar & Zuidema"
AZ_WILDCARDS = {"dataset": "|".join(map(re.escape, AZ_DATASETS)), "seed": r"\d+"}
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
    """Every analysed (dataset, seed) with its files: one list, so inputs and labels cannot disagree."""
    return [
        {"dataset": d, "seed": int(s), **paths.az_files(d, s)}
        for d in AZ_DATASETS
        for s in AZ_SEEDS
    ]


def get_az_run_summaries(wildcards=None):
    return [run[key] for run in get_az_runs() for key in ("summary", "recovery")]


def az_figure_outputs(name, title, model="-"):
    """A figure's PNG (in the report under the dataset, caption ../report/az/{name}.rst) and its PDF."""
    files = paths.figure_files("az", AZ_FIGURES[name])
    png = in_report(
        files["png"],
        caption=f"../report/az/{name}.rst",
        category=AZ_CATEGORY,
        subcategory="{dataset}",
        labels={"model": model, "figure": title},
    )
    return {"png": png, "pdf": files["pdf"]}


def az_table_outputs():
    """Every A&Z table, named `{stem}_{format}`; the CSV is in the report under "All datasets"."""
    outputs = {}
    for stem, title in AZ_TABLES.items():
        for fmt, path in paths.table_files("az", stem).items():
            outputs[f"{stem}_{fmt}"] = path
        outputs[f"{stem}_csv"] = in_report(
            outputs[f"{stem}_csv"],
            caption=f"../report/az/{stem}.rst",
            category=AZ_CATEGORY,
            subcategory="All datasets",
            labels={"model": "-", "table": title},
        )
    return outputs


def get_az_table_targets():
    if not AZ_DATASETS:
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
        paths.model_files(d, "transformer", "self", s)["metrics"] for d, s in runs
    ]
    jw = [
        paths.analysis_files(d, "transformer", "self", s)["kendall_summary"]
        for d, s in (runs if AZ["jw_analyses"] else [])
    ]
    return [
        *models,
        *jw,
        *paths.az_combined_files().values(),
        *get_az_table_targets(),
        *get_az_figure_targets(),
    ]


# --- figures: tables, figures and the HTML report ---
from attnexp.report.jw.catalog import MODEL_FIGURE_TABLES, SUMMARY_FIGURE_NAMES

FIGURES = config["figures"]
# `report(` at the start of a line would parse as the global `report:` directive
in_report = report
MODEL_FIGURE_NAMES = FIGURES["per_model"]
SUMMARY_FIGURES = FIGURES["summary"]


wildcard_constraints:
    figure="|".join(MODEL_FIGURE_TABLES),
    summary_figure="|".join(SUMMARY_FIGURE_NAMES),


def analysis_dir(dataset, encoder, attention, seed):
    return f"results/analyses/{dataset}/{encoder}-{attention}/seed{seed}"


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


def figure_options():
    keys = ("palette", "width", "dpi", "examples", "example_max_tokens")
    return {key: FIGURES[key] for key in keys}


def bootstrap_options():
    return dict(FIGURES["bootstrap"])


def kendall_nan_policy():
    """Table 2 follows the analyses' τ NaN policy (J&W §6.3), so its numbers match kendall_summary.csv."""
    analyses = config.get("analyses", {})
    return analyses.get("kendall", {}).get(
        "nan_policy", analyses.get("kendall_nan_policy", "omit")
    )


def model_tables(model, tables):
    """Paths of the analysis tables `tables` of one model (`instances` = the preprocessed instances)."""
    folder = analysis_dir(**model)
    paths = {t: f"{folder}/{t}.parquet" for t in tables if t != "instances"}
    if "instances" in tables:
        paths["instances"] = (
            f"results/preprocessed/{model['dataset']}/instances.parquet"
        )
    return paths


def needed_tables(names):
    return sorted({t for name in names for t in MODEL_FIGURE_TABLES[name]})


def get_dataset_figure_models(wildcards):
    tables = needed_tables(MODEL_FIGURE_NAMES)
    return [
        {**m, **model_tables(m, tables)} for m in figure_models([wildcards.dataset])
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


def get_model_figure_models(wildcards):
    model = wildcard_model(wildcards)
    return [{**model, **model_tables(model, MODEL_FIGURE_TABLES[wildcards.figure])}]


def get_model_figure_inputs(wildcards):
    return list(
        model_tables(
            wildcard_model(wildcards), MODEL_FIGURE_TABLES[wildcards.figure]
        ).values()
    )


def model_figure_outputs():
    """Every per-model figure of one dataset ({dataset} left as a wildcard); PNGs go into the report."""
    outputs = []
    for m in figure_models(["{dataset}"]):
        for name in MODEL_FIGURE_NAMES:
            stem = f"results/figures/{{dataset}}/{m['encoder']}-{m['attention']}/seed{m['seed']}/{name}"
            outputs.append(
                in_report(
                    f"{stem}.png",
                    caption=f"../report/{name}.rst",
                    category="{dataset}",
                    subcategory=f"{m['encoder']}-{m['attention']} seed {m['seed']}",
                    labels={
                        "figure": name,
                        "model": f"{m['encoder']}-{m['attention']}",
                        "seed": str(m["seed"]),
                    },
                )
            )
            outputs.append(f"{stem}.pdf")
    return outputs


def summary_figure_outputs():
    outputs = []
    for attention in ATTENTIONS:
        for name in SUMMARY_FIGURES:
            stem = f"results/figures/summary/{attention}/{name}"
            outputs.append(
                in_report(
                    f"{stem}.png",
                    caption=f"../report/{name}.rst",
                    category="Summary",
                    subcategory=f"{attention} attention",
                    labels={"figure": name, "attention": attention},
                )
            )
            outputs.append(f"{stem}.pdf")
    return outputs


def table_outputs(stem, caption):
    return {
        "csv": in_report(
            f"results/tables/{stem}.csv",
            caption=caption,
            category="Tables",
            labels={"table": stem},
        ),
        "md": f"results/tables/{stem}.md",
        "tex": f"results/tables/{stem}.tex",
    }


def get_table_targets():
    stems = ["table1_datasets", "table2_kendall", "cross_measure", "rationale_recovery"]
    return [
        f"results/tables/{stem}.{ext}" for stem in stems for ext in ("csv", "md", "tex")
    ]


def get_figure_targets():
    """Manifests: each stands for one batch job that draws all figures of a dataset (or the summary)."""
    return expand("results/figures/{dataset}/figures.json", dataset=DATASET_NAMES) + [
        "results/figures/summary/figures.json"
    ]


def get_figures_targets():
    return get_table_targets() + get_figure_targets()


# --- wp ---
# Wiegreffe & Pinter (2019): runs under results/wp/{dataset}/{variant}/seed{seed}[/lambda{lam}].
WP = config["wp"]
WP_DATASETS = check_datasets_available(WP["datasets"]) if WP["datasets"] else []
WP_SPLITS = ["train", "dev", "test"]
WP_GUIDE_VARIANTS = {
    "uniform": "mlp_uniform",
    "trained": "mlp_trained",
    "base": "mlp_base",
    "adversary": "mlp_adv",
}


def lambda_label(value):
    return f"{float(value):g}"


def wp_lambdas(dataset):
    return WP["lambdas"].get(dataset, WP["lambdas"]["default"])


def wp_diag_lambda(dataset):
    return WP["diag_adv_lambda"].get(dataset, WP["diag_adv_lambda"]["default"])


WP_LAMBDA_LABELS = sorted(
    {lambda_label(x) for d in WP_DATASETS for x in [*wp_lambdas(d), wp_diag_lambda(d)]}
)


wildcard_constraints:
    variant="|".join(["base", "uniform", *WP_GUIDE_VARIANTS.values()]),
    lam="|".join(re.escape(x) for x in WP_LAMBDA_LABELS) or "none",


def wp_run_dir(dataset, variant, seed=None, lam=None):
    seed = WP["base_seed"] if seed is None else seed
    path = f"results/wp/{dataset}/{variant}/seed{seed}"
    return path if lam is None else f"{path}/lambda{lambda_label(lam)}"


def wp_run_files(run_dir):
    """Named files of one W&P run (the same names as the rules' outputs)."""
    files = {
        "model": f"{run_dir}/model.pt",
        "metrics": f"{run_dir}/test_metrics.json",
        "history": f"{run_dir}/train_log.csv",
        "config": f"{run_dir}/config.yaml",
    }
    for split in WP_SPLITS:
        files[f"{split}_predictions"] = f"{run_dir}/{split}_predictions.parquet"
        files[f"{split}_attention"] = f"{run_dir}/{split}_attention.parquet"
    return files


def wp_base_files(dataset, seed=None):
    return wp_run_files(wp_run_dir(dataset, "base", seed))


def wp_preprocessed(dataset):
    return {
        "instances": f"results/preprocessed/{dataset}/instances.parquet",
        "meta": f"results/preprocessed/{dataset}/meta.json",
    }


def get_wp_train_inputs(wildcards):
    """Preprocessed data, plus the donor run's stored attention for frozen-guide MLPs."""
    inputs = wp_preprocessed(wildcards.dataset)
    if wildcards.variant == "mlp_base":
        donor = wp_base_files(wildcards.dataset)
    elif wildcards.variant == "mlp_adv":
        lam = wp_diag_lambda(wildcards.dataset)
        donor = wp_run_files(wp_run_dir(wildcards.dataset, "adversarial", lam=lam))
    else:
        return inputs
    return {**inputs, **{k: v for k, v in donor.items() if k.endswith("_attention")}}


def get_wp_adversary_inputs(wildcards):
    return {**wp_preprocessed(wildcards.dataset), **wp_base_files(wildcards.dataset)}


def wp_metrics(variant, datasets=None):
    return [
        wp_run_files(wp_run_dir(d, variant))["metrics"] for d in datasets or WP_DATASETS
    ]


def get_wp_seed_files(wildcards):
    return [wp_base_files(wildcards.dataset, s) for s in WP["seeds"]]


def get_wp_adversary_runs(dataset):
    return [
        wp_run_files(wp_run_dir(dataset, "adversarial", lam=x))
        for x in wp_lambdas(dataset)
    ]


def get_wp_seed_variance_inputs(wildcards):
    files = [wp_base_files(wildcards.dataset)["test_predictions"]]
    for run in [wp_base_files(wildcards.dataset), *get_wp_seed_files(wildcards)]:
        files += [run["test_predictions"], run["test_attention"], run["metrics"]]
    return sorted(set(files))


def wp_jw_adversary_file(dataset):
    """The J&W per-instance adversary on the base model, or None when wp.jw_adversary_runs is 0."""
    if not WP["jw_adversary_runs"]:
        return None
    return f"{wp_run_dir(dataset, 'base')}/jw_adversary.parquet"


def get_wp_adversary_variance_inputs(wildcards):
    files = wp_base_files(wildcards.dataset)
    return [
        files["test_predictions"],
        files["test_attention"],
        wp_jw_adversary_file(wildcards.dataset),
    ]


def get_wp_points_inputs(wildcards):
    jw_adversary = wp_jw_adversary_file(wildcards.dataset)
    runs = [
        wp_base_files(wildcards.dataset),
        wp_run_files(wp_run_dir(wildcards.dataset, "uniform")),
        *get_wp_seed_files(wildcards),
        *get_wp_adversary_runs(wildcards.dataset),
    ]
    files = {
        run[k]
        for run in runs
        for k in ("test_predictions", "test_attention", "metrics")
    }
    return sorted(files | ({jw_adversary} if jw_adversary else set()))


def get_wp_diagnostic_metrics(wildcards=None):
    return [
        wp_run_files(wp_run_dir(d, WP_GUIDE_VARIANTS[g]))["metrics"]
        for d in WP_DATASETS
        for g in WP["guides"]
    ]


def get_wp_adversarial_metrics(wildcards=None):
    return [run["metrics"] for d in WP_DATASETS for run in get_wp_adversary_runs(d)]


def get_wp_uniform_targets():
    return ["results/tables/wp/uniform_table.csv"]


def get_wp_seed_targets():
    kinds = ["seed", "adv"] if WP["jw_adversary_runs"] else ["seed"]
    return expand(
        "results/figures/wp/{dataset}/{kind}_{figure}.{ext}",
        dataset=WP_DATASETS,
        kind=kinds,
        figure=["violin", "scatter"],
        ext=["png", "pdf"],
    )


def get_wp_diagnostic_targets():
    return ["results/tables/wp/diagnostic_table.csv"] if WP["guides"] else []


def get_wp_adversarial_targets():
    return [
        "results/tables/wp/adversarial_table.csv",
        *expand(
            "results/figures/wp/{dataset}/jsd_tvd.{ext}",
            dataset=WP_DATASETS,
            ext=["png", "pdf"],
        ),
    ]


def get_wp_targets():
    if not WP_DATASETS:
        return []
    return [
        *get_wp_uniform_targets(),
        *get_wp_seed_targets(),
        *get_wp_diagnostic_targets(),
        *get_wp_adversarial_targets(),
    ]
