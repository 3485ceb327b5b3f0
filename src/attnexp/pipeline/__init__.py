"""The one door from the workflow into the library: plan, settings and jobs.

- `plan`: `Plan.from_config(config)`, which jobs a validated config asks for (datasets per paper, runs, targets,
  wildcard alternatives): the one facade over `plans` (a part per paper or stage);
- `settings`: one `<Job>Settings.from_plan(plan, **wildcards)` per kind of job, from the plan and the validated
  config it carries alone;
- the stages' jobs, each `run_<job>(*, inputs, outputs, settings, threads)` with files in and files out:
  `data` (synthesize, download, preprocess), `train` (J&W models, the Transformer), `jw` (analyses, tables,
  figures), `wp` (W&P runs, analyses, tables, figures), `az` (A&Z analyses, tables, figures), `hf` (Hugging Face
  tokenizing and runs), `report` (the comparison table and the HTML report).

A workflow script is `call(run_<job>, snakemake)`. The domain packages (datasets, data, models, analyses,
report) hold the science; they read no config and join no file names. Import-light: torch, pandas and matplotlib
load inside the jobs.
"""

import os
import typing
from collections.abc import Callable, Mapping

Files = Mapping[str, typing.Any]  # a job's named files: a path, or a list of paths


def files(named) -> dict:
    """Snakemake's named inputs or outputs as a plain dict (a list for a named list of files)."""
    return {key: value if isinstance(value, str) else list(value) for key, value in named.items()}


def load_trained(model, meta=None, device: str = "cpu", *, instances=None):
    """The trained model at `model` (`models.checkpoint.load_model`, on `device`) after checking that it was trained on
    the preprocessed data the job pairs it with (`models.checkpoint.check_matches`: dataset, vocabulary size): that of
    the meta.json `meta`, or else of the meta.json beside `instances` (jobs whose rule declares only the instances;
    preprocess writes both), unchecked where there is none. A mismatch raises CorruptFileError naming both files."""
    from pathlib import Path

    from attnexp import paths
    from attnexp.io import read_json
    from attnexp.models.checkpoint import check_matches, load_model, read_checkpoint

    if meta is None and instances is not None:
        beside = Path(instances).with_name(paths.PREPROCESSED_FILES["meta"])
        meta = beside if beside.exists() else None
    if meta is not None:
        check_matches(read_checkpoint(model), read_json(meta), model, meta)
    return load_model(model, device)


class ByRule(dict):
    """The jobs of one script shared by several rules, by rule name: `call` runs the rule's own job, so that no job
    guesses its kind from which files it was given."""


def call(job: "Callable | ByRule", snakemake) -> None:
    """Run one job from a workflow script: its log first, then `job` (of a `ByRule`: the rule's) by keyword with the
    rule's named files, its settings (rebuilt from the rule's `params.settings`) and its threads; the log ends with
    its usage, rule and wildcards. Figures draw headless (Agg)."""
    from attnexp.runlog import log_to

    if isinstance(job, ByRule):
        if snakemake.rule not in job:
            raise ValueError(f"rule {snakemake.rule!r} has no job here; the script serves {', '.join(job)}")
        job = job[snakemake.rule]
    os.environ.setdefault("MPLBACKEND", "Agg")
    with log_to(snakemake.log[0], job=(snakemake.rule, dict(snakemake.wildcards.items()))):
        settings = typing.get_type_hints(job)["settings"]
        job(
            inputs=files(snakemake.input),
            outputs=files(snakemake.output),
            settings=settings.from_param(snakemake.params.settings),
            threads=snakemake.threads,
        )
