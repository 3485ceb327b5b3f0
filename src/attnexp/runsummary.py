"""What the console says around a workflow run (the Snakefile's onstart / onsuccess / onerror handlers): where to
watch per-epoch progress, and a closing summary of what ran per stage, the wall time, where the results and the
HTML report are and how to open them, or which jobs failed and where their logs are.

What ran and what failed come from Snakemake's job events, as attnexp.runconsole records them (never from the
console's text); the wall time from the name of Snakemake's log of the run. Pure Python, so the workflow can import
it at parse time.
"""

import json
import re
import shlex
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from attnexp import paths
from attnexp.chance import majority_rate, near_chance
from attnexp.checksums import verify_checksum
from attnexp.errors import CorruptFileError
from attnexp.runconsole import JobEvents, current, labels

# Stages in the order a run goes through them; a rule belongs to the first stage whose prefix it has.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("data", ("synthesize", "download", "preprocess", "linzen_agreement")),
    ("training", ("train",)),
    ("J&W analyses", ("analyze",)),
    ("W&P", ("wp_",)),
    ("A&Z", ("az_",)),
    ("Hugging Face", ("hf_",)),
    ("J&W tables & figures", ("table", "cross_measure", "rationale", "dataset_figures", "model_figure", "summary_fig")),
    ("comparison", ("paper_comparison",)),
    ("report", ("report",)),
)
TARGET_RULES = frozenset({"all", "models", "analyses", "tables", "figures", "datasets", "preprocessed"})
WATCH = f"tail -F {paths.LOGS}/train/*/*/*.log"  # per-epoch lines of the J&W models while they train
_STARTED = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{6})\.\d+\.snakemake\.log$")


def stage_of(rule: str) -> str | None:
    """The stage a rule belongs to; None for the aggregate targets (`all`, `models`, ...)."""
    if rule in TARGET_RULES:
        return None
    for stage, prefixes in STAGES:
        if rule.startswith(prefixes):
            return stage
    return "other"


def finished_by_stage(rules: Sequence[str]) -> dict[str, int]:
    """Finished jobs (their rules) per stage, in the order of STAGES."""
    counts = Counter(stage_of(rule) for rule in rules)
    order = [stage for stage, _ in STAGES] + ["other"]
    return {stage: counts[stage] for stage in order if counts[stage]}


LogPath = str | Path | list | tuple | None  # Snakemake 9 passes its log files as a list


def _logfile(log_path: LogPath) -> str | None:
    """Snakemake's log of this run out of what the handlers receive (a path, or a list of the log files)."""
    if isinstance(log_path, list | tuple):
        return next((str(p) for p in log_path if str(p).endswith(".snakemake.log")), str(log_path[0]) if log_path else None)
    return str(log_path) if log_path else None


STOP_SIGNALS = "Ctrl-C or SIGTERM"
# what Snakemake logs when stopped: SIGINT (Ctrl-C) ends the running jobs, SIGTERM lets them finish
_STOPPED = ("Terminating processes on user request", "Will exit after finishing currently running jobs")


def stopped_on_request(log_path: LogPath) -> bool:
    """Whether Snakemake's log of this run says a signal stopped it (then the run did not fail: it was stopped)."""
    path = _logfile(log_path)
    try:
        text = Path(path).read_text(errors="replace") if path is not None else ""
    except OSError:
        return False
    return any(marker in text for marker in _STOPPED)


def wall_time(log_path: LogPath, now: datetime | None = None) -> str:
    """Time since the run started (the start time is in the name of Snakemake's log), as H:MM:SS."""
    match = _STARTED.search(_logfile(log_path) or "")
    if not match:
        return "unknown"
    seconds = int(((now or datetime.now()) - datetime.strptime(match.group(1), "%Y-%m-%dT%H%M%S")).total_seconds())
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def report_is_stale(workdir: Path, reported: Sequence[str | Path]) -> bool:
    """Whether the report misses or predates one of `reported` (the report rule's inputs: every table and figure
    of this run's grid); without them, whether it predates any file under results/ but the report itself."""
    report = workdir / paths.REPORT
    if reported:
        files = [workdir / f for f in reported]
        if not all(f.exists() for f in files):
            return True
    else:
        files = [f for f in (workdir / paths.RESULTS).rglob("*") if f.is_file() and f != report]
    return max((f.stat().st_mtime for f in files), default=0.0) > report.stat().st_mtime


def report_command(
    workdir: str | Path = ".",
    snakefile: str | Path | None = None,
    configfiles: Sequence[str | Path] = (),
    config_args: Sequence[str] = (),
) -> str:
    """The command that builds this run's report: the run's `--configfile`s and `--config` values, and its
    Snakefile and `--directory` (absolute, so it works from anywhere) where the working directory is not the
    Snakefile's folder. The target comes before `--configfile`, which takes several files."""
    workdir = Path(workdir).resolve()
    words = ["snakemake"]
    if snakefile is not None and Path(snakefile).resolve().parent != workdir:
        words += ["-s", str(Path(snakefile).resolve()), "--directory", str(workdir)]
    words += ["report", "--cores", "1"]
    if configfiles:
        words += ["--configfile", *(str(Path(f).resolve()) for f in configfiles)]
    if config_args:
        words += ["--config", *config_args]
    return shlex.join(words)


def models_of(plan) -> list[str]:
    """The metrics.json of every model a run's plan (`attnexp.pipeline.plan.Plan`) trains: the J&W grid's and the
    Hugging Face runs' (the models of the J&W tables), then the A&Z Transformers; relative to the working directory."""
    files = [plan.table_model_files(m, "model")["metrics"] for m in plan.table_models("model")]
    files += [
        paths.model_files(d, "transformer", plan.az_attention, s)["metrics"] for d in plan.az_datasets for s in plan.az_seeds
    ]
    return list(dict.fromkeys(files))


def _run_of(metrics_file: Path, workdir: Path) -> tuple[Path, str, str, str] | None:
    """(the meta.json of the instances it was tested on, dataset, model label, seed folder) of a run's metrics.json:
    results/models/{dataset}/{model}/seed{k}/ or results/hf/{hf_model}/{dataset}/seed{k}/model/; None for others."""
    parts = metrics_file.parts
    if parts[-6:-4] == (paths.RESULTS, "models"):
        return workdir / paths.preprocessed_files(parts[-4])["meta"], parts[-4], parts[-3], parts[-2]
    if parts[-7:-5] == (paths.RESULTS, "hf") and parts[-2] == "model":
        hf_model, dataset = parts[-5], parts[-4]
        return workdir / paths.hf_preprocessed_files(hf_model, dataset)["meta"], dataset, f"hf-{hf_model}", parts[-3]
    return None


def chance_level_models(workdir: Path, models: Sequence[str | Path], changed: list[str] | None = None) -> list[str]:
    """This run's trained models whose test accuracy is near chance (attnexp.chance), as "dataset model seed k
    (accuracy vs the majority rate)". `models`: the metrics.json of the run's models (`models_of`; relative to
    `workdir`), never whatever else lies under results/ (the models of other configs); those not written yet are left
    out. Each metrics.json and meta.json is checked against its sha256 sidecar first: one changed after it was
    written (or without its sidecar) is left out too, and its message goes to `changed`."""
    found = []
    for name in models:
        run = _run_of(Path(name), workdir)
        if run is None:
            continue
        meta_file, dataset, model, seed = run
        try:
            for path in (workdir / name, meta_file):
                verify_checksum(path)
            metrics, meta = json.loads((workdir / name).read_text()), json.loads(meta_file.read_text())
            rate = majority_rate(meta.get("class_counts", {}).get("test", {}), len(meta["classes"]))
            accuracy, n = float(metrics["accuracy"]), int(metrics.get("n", meta["sizes"]["test"]))
        except CorruptFileError as err:
            if changed is not None and str(err) not in changed:
                changed.append(str(err))
            continue
        except (OSError, ValueError, KeyError):
            continue
        if near_chance(accuracy, n, rate):
            found.append(f"{dataset} {model} {seed.replace('seed', 'seed ')} ({accuracy:.2f} vs {rate:.2f})")
    return found


def _ran(events: JobEvents | None) -> str:
    stages = finished_by_stage(events.finished if events else [])
    if not stages:
        return "no jobs"
    total = sum(stages.values())
    return f"{total} job{'s' * (total != 1)} (" + ", ".join(f"{stage} {n}" for stage, n in stages.items()) + ")"


def start_banner() -> str:
    """What onstart prints: where per-epoch progress shows while jobs run."""
    return (
        f"attnexp: per-epoch training progress goes to {paths.LOGS}/ (one log per job); watch it with\n"
        f"  {WATCH}\n"
        "The run resumes where it stopped if interrupted: run the same command again."
    )


def success_summary(
    log_path: LogPath,
    workdir: str | Path = ".",
    now: datetime | None = None,
    events: JobEvents | None = None,
    *,
    reported: Sequence[str | Path] = (),
    command: str | None = None,
    models: Sequence[str | Path] = (),
) -> str:
    """The closing summary of a successful run: what ran per stage (`events`: this run's, by default those
    attnexp.runconsole records), wall time, where results and report are, models near chance level. `reported`: the
    report's tables and figures (for its staleness); `command`: how to build the report for this run
    (`report_command`; default the plain one); `models`: the metrics.json of this run's models (`models_of`), the
    only ones the near-chance warning may name (none given: no warning)."""
    workdir = Path(workdir).resolve()
    events = events or current()
    command = command or report_command(workdir)
    how = f"`{command}`" + (" (or `make report`)" if command == report_command() else "")
    report = workdir / paths.REPORT
    lines = [
        f"== attnexp: finished in {wall_time(log_path, now)} ==",
        f"Ran:      {_ran(events)}",
        f"Results:  {workdir / paths.RESULTS}/  (tables: {paths.RESULTS}/tables/{{jw,wp,az,erasure}}/,"
        f" figures: {paths.RESULTS}/figures/{{jw,wp,az,erasure}}/)",
        f"Logs:     {workdir / paths.LOGS}/  (per-epoch lines of every training job)",
    ]
    if report.exists() and report_is_stale(workdir, reported):
        lines.append(f"Report:   {report} is older than the results: {how} rebuilds it")
    elif report.exists():
        lines.append(f"Report:   {report}  (open it in a browser, e.g. `xdg-open {report}`)")
    else:
        lines.append(f"Report:   not built yet: {how} writes {report}")
    changed: list[str] = []
    chance = chance_level_models(workdir, models, changed)
    if chance:
        shown = ", ".join(chance[:5]) + (f" and {len(chance) - 5} more" if len(chance) > 5 else "")
        lines.append(
            f"Warning:  {len(chance)} model{'s' * (len(chance) != 1)} near chance level (test accuracy not significantly"
            f" above always predicting the majority class; Table 1 marks them): {shown}"
        )
    lines += [f"Warning:  not checked for chance level: {message}" for message in changed]
    return "\n".join(lines)


def error_summary(
    log_path: LogPath, workdir: str | Path = ".", now: datetime | None = None, events: JobEvents | None = None
) -> str:
    """The closing summary of a run that did not finish: the failed jobs (rule, dataset, model, seed) with their logs,
    from Snakemake's job events whatever `quiet` hid, or STOPPED when a signal ended a run in which no job failed;
    what finished, how to resume."""
    events = events or current()
    failed = events.failed if events else []
    stopped = not failed and stopped_on_request(log_path)
    lines = [f"== attnexp: {'STOPPED' if stopped else 'FAILED'} after {wall_time(log_path, now)} =="]
    for job in failed:
        where = f"  log: {', '.join(job['log'])}" if job["log"] else ""
        lines.append(f"Failed:   {job['rule']}  {labels(job['wildcards'])}".rstrip() + where)
    if stopped:
        lines.append(f"Stopped:  on request ({STOP_SIGNALS}); no job failed")
    elif not failed:
        lines.append("Failed:   no job (the workflow itself stopped: see the messages above)")
    again = "Run the same command again to resume" if stopped else "Fix the cause and run the same command again"
    lines += [f"Finished: {_ran(events)}; their outputs are kept.", f"{again}: only what is missing or incomplete runs."]
    if _logfile(log_path):
        lines.append(f"Full log: {_logfile(log_path)}")
    return "\n".join(lines)
