# What a job asks the scheduler for: runtime (minutes) and mem_mb (MB) from its own measured or predicted cost in
# workflow/resources.tsv (one row per rule x dataset x model; benchmarks/paper_grid_cost.py --write-resources
# regenerates it), with headroom and a floor, x `attempt` (1, 2, ...) so that a job killed for time or memory asks
# for more on resubmission (retries: in profiles/slurm); config `runtime_scale` rescales every runtime for a site's
# slower or faster cores (attnexp.pipeline.resources). All rules declare `**JOB_RESOURCES` as their resources; threads
# per kind of job come from config `threads`, and gpu=1 on the GPU-capable jobs.
from attnexp.models.device import effective_threads, gpu_jobs
from attnexp.pipeline.resources import ResourceTable, job_priority, job_resources

RESOURCE_TABLE = ResourceTable.read(workflow.source_path("../resources.tsv"))
JOB_RESOURCES = job_resources(RESOURCE_TABLE, config["runtime_scale"])
# The rules on the DAG's long chains declare `priority: JOB_PRIORITY`: the CPU seconds of the chain a job starts
# (attnexp.pipeline.resources.FOLLOWERS), so the longest chains begin as soon as their inputs exist.
JOB_PRIORITY = job_priority(RESOURCE_TABLE)


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
