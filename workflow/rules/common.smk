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
    targets = get_model_targets()
    targets += get_analyses_targets()
    targets += get_transformer_targets()
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
