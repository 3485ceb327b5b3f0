# What a job asks the scheduler for: mem_mb in MB and runtime in minutes (`resources: **RESOURCES["small"]`),
# threads per kind of job (config `threads`), and gpu=1 on the GPU-capable jobs.
from attnexp.datasets import get_dataset
from attnexp.models.device import effective_threads, gpu_jobs


# Generated data is tiny, real corpora (IMDB, SNLI, CNN) need more; `attempt` (1, 2, ...) grows the request
# on each retry, so a job killed for memory or time succeeds on resubmission (retries: in profiles/slurm).
def by_data(generated, real):
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
    "preprocess": {"mem_mb": by_data(1000, 8000), "runtime": by_data(10, 120)},
    "train": {"mem_mb": by_data(2000, 8000), "runtime": by_data(30, 720)},
}


# GPU-capable jobs (training, the J&W and A&Z analyses, the W&P runs) declare `resources: **GPU`: gpu=1 when
# `device` resolves to CUDA here (or `gpu_jobs: true`), so `--resources gpu=1` runs them one at a time and
# profiles/slurm sends exactly them to a GPU partition; nothing on a CPU-only machine. `device: cuda` without
# a GPU stops here, before any job.
try:
    GPU = {"gpu": 1} if gpu_jobs(config["device"], config["gpu_jobs"]) else {}
except ConfigError as err:
    raise WorkflowError(
        f"{err}\nFix config/config.yaml (or the file given with --configfile)."
    ) from None
THREADS = config["threads"]


def torch_threads(rule, kind):
    """`params: torch_threads=` of a threaded rule: the threads its jobs really get (config `threads`, or a profile's
    set-threads, scaled down to --cores and --max-threads). Another count can change float rounding (torch's
    parallel reductions), so a run that changes it reruns exactly those jobs; byte-identity holds for the same
    config, seeds and thread counts (recorded as `threads` in each run's config.yaml).
    """
    overrides = workflow.resource_settings.overwrite_threads
    asked = getattr(overrides.get(rule), "value", overrides.get(rule))
    return effective_threads(
        asked if isinstance(asked, int) else THREADS[kind],
        workflow._cores,
        workflow.resource_settings.max_threads,
    )
