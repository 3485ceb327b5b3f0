# Helpers shared by every stage: config validation, the grid, wildcard constraints, input functions.
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
    raise WorkflowError(
        f"dataset {wildcards.dataset!r} has no raw-data source configured"
    )


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
