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
    targets += get_transformer_targets()
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
