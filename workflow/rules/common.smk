# Helpers shared by every stage: config validation, the grid, wildcard constraints, input functions.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from attnexp.config import ConfigError, validate_config
from attnexp.datasets import DATASETS, get_dataset

try:
    validate_config(config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml")
except ConfigError as err:
    raise WorkflowError(f"{err}\nFix config/config.yaml (or the file given with --configfile).") from None


DATASET_NAMES = config["datasets"]
ENCODERS = config["encoders"]
ATTENTIONS = config["attentions"]
SEEDS = config["seeds"]
SYNTHETIC_FAMILIES = sorted(
    {get_dataset(d).synthetic for d in DATASET_NAMES if get_dataset(d).synthetic}
)


wildcard_constraints:
    dataset="|".join(sorted(DATASETS)),
    encoder="lstm|cnn|average",
    attention="tanh|dot|uniform",
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
    raise WorkflowError(f"dataset {wildcards.dataset!r} has no raw-data source configured")


def get_raw_files(wildcards):
    spec = get_dataset(wildcards.dataset)
    return [f"{get_raw_dir(wildcards)}/{name}" for name in spec.raw_files]


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
    return get_model_targets()


# --- figures: tables, figures and the HTML report ---
from attnexp.plots.catalog import MODEL_FIGURE_TABLES, SUMMARY_FIGURE_NAMES

FIGURES = config["figures"]
in_report = report  # `report` at the start of a line would parse as the global directive
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
    return [m for m in grid_models(datasets) if "all" in chosen or f"{m['encoder']}-{m['attention']}" in chosen]


def figure_options():
    keys = ("palette", "width", "dpi", "examples", "example_max_tokens")
    return {key: FIGURES[key] for key in keys}


def bootstrap_options():
    return dict(FIGURES["bootstrap"])


def kendall_nan_policy():
    """Table 2 follows the analyses' τ NaN policy (J&W §6.3), so its numbers match kendall_summary.csv."""
    analyses = config.get("analyses", {})
    return analyses.get("kendall", {}).get("nan_policy", analyses.get("kendall_nan_policy", "omit"))


def model_tables(model, tables):
    """Paths of the analysis tables `tables` of one model (`instances` = the preprocessed instances)."""
    folder = analysis_dir(**model)
    paths = {t: f"{folder}/{t}.parquet" for t in tables if t != "instances"}
    if "instances" in tables:
        paths["instances"] = f"results/preprocessed/{model['dataset']}/instances.parquet"
    return paths


def needed_tables(names):
    return sorted({t for name in names for t in MODEL_FIGURE_TABLES[name]})


def get_dataset_figure_models(wildcards):
    tables = needed_tables(MODEL_FIGURE_NAMES)
    return [{**m, **model_tables(m, tables)} for m in figure_models([wildcards.dataset])]


def get_dataset_figure_inputs(wildcards):
    tables = needed_tables(MODEL_FIGURE_NAMES)
    return sorted({p for m in figure_models([wildcards.dataset]) for p in model_tables(m, tables).values()})


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
    return list(model_tables(wildcard_model(wildcards), MODEL_FIGURE_TABLES[wildcards.figure]).values())


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
                    labels={"figure": name, "model": f"{m['encoder']}-{m['attention']}", "seed": str(m["seed"])},
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
        "csv": in_report(f"results/tables/{stem}.csv", caption=caption, category="Tables", labels={"table": stem}),
        "md": f"results/tables/{stem}.md",
        "tex": f"results/tables/{stem}.tex",
    }


def get_table_targets():
    stems = ["table1_datasets", "table2_kendall", "cross_measure", "rationale_recovery"]
    return [f"results/tables/{stem}.{ext}" for stem in stems for ext in ("csv", "md", "tex")]


def get_figure_targets():
    """Manifests: each stands for one batch job that draws all figures of a dataset (or the summary)."""
    return expand("results/figures/{dataset}/figures.json", dataset=DATASET_NAMES) + [
        "results/figures/summary/figures.json"
    ]


def get_figures_targets():
    return get_table_targets() + get_figure_targets()
