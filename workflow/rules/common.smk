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
from attnexp.models.attention import ATTENTIONS as KNOWN_ATTENTIONS
from attnexp.models.encoders import ENCODERS as KNOWN_ENCODERS
from attnexp.models.transformer import TransformerConfig

try:
    validate_config(
        config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
    )
except ConfigError as err:
    raise WorkflowError(
        f"{err}\nFix config/config.yaml (or the file given with --configfile)."
    ) from None


def get_available_datasets(names):
    """`names` without the datasets whose raw data is missing (data.on_missing: skip), or stop (fail)."""
    try:
        return policy.check_datasets_available(names, DATA, workflow.basedir)
    except ConfigError as err:
        raise WorkflowError(str(err)) from None


DATA = config["data"]
DATASET_NAMES = get_available_datasets(config["datasets"])
ENCODERS = config["encoders"]
ATTENTIONS = config["attentions"]
SEEDS = config["seeds"]


wildcard_constraints:
    dataset="|".join(sorted(DATASETS)),
    encoder="|".join([*KNOWN_ENCODERS, TransformerConfig.encoder]),
    attention="|".join([*KNOWN_ATTENTIONS, TransformerConfig.attention]),
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
    targets += get_transformer_targets()
    targets += get_wp_targets()

    targets += get_figures_targets()
    return targets


# --- analyses ---
def get_analysis_batch_size(wildcards):
    """J&W analyse the test set in batches of the training batch size."""
    return get_hyperparameters(wildcards)["batch_size"]


def get_analyses_targets():
    return grid(
        "results/analyses/{dataset}/{encoder}-{attention}/seed{seed}/kendall_summary.csv"
    )


# --- transformer (Abnar & Zuidema) ---
AZ_DATASETS = config["az"]["datasets"] + (
    ["linzen_agreement"] if config["az"]["linzen_path"] else []
)
AZ_OPTION_KEYS = (
    "n_examples sample_seed batch_size relevance_row score gradient spearman nan_policy"
    " exclude_special cumulative_layer_lists flow_solver rollout_residual"
).split()


def get_linzen_path(wildcards):
    path = config["az"]["linzen_path"]
    if not path:
        raise WorkflowError(
            "dataset linzen_agreement needs the Linzen et al. corpus: set az.linzen_path "
            "to agr_50_mostcommon_10K.tsv(.gz) from the rnn_agreement release"
        )
    return path


def get_az_options(wildcards):
    return {key: config["az"][key] for key in AZ_OPTION_KEYS}


def get_az_files(name):
    return expand(
        "results/az/{dataset}/seed{seed}/{name}",
        dataset=AZ_DATASETS,
        seed=config["az"]["seeds"],
        name=name,
    )


def get_az_instances():
    return expand(
        "results/preprocessed/{dataset}/instances.parquet",
        dataset=AZ_DATASETS,
        seed=config["az"]["seeds"],
    )


def get_az_cls_map_files():
    return expand(
        "results/az/figures/cls_maps/{dataset}_seed{seed}.png",
        dataset=AZ_DATASETS,
        seed=config["az"]["seeds"],
    )


def get_transformer_targets():
    if not AZ_DATASETS:
        return []
    return (
        expand(
            "results/models/{dataset}/transformer-self/seed{seed}/metrics.json",
            dataset=AZ_DATASETS,
            seed=config["az"]["seeds"],
        )
        + ["results/az/tables.md", "results/az/figures/correlation_by_layer.png"]
        + get_az_cls_map_files()
        + expand(
            "results/analyses/{dataset}/transformer-self/seed{seed}/kendall_summary.csv",
            dataset=AZ_DATASETS if config["az"]["jw_analyses"] else [],
            seed=config["az"]["seeds"],
        )
    )


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
WP_DATASETS = get_available_datasets(WP["datasets"]) if WP["datasets"] else []
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
