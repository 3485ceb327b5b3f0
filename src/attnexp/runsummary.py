"""What the console says around a workflow run (the Snakefile's onstart / onsuccess / onerror handlers): where to
watch per-epoch progress, and a closing summary of what ran per stage, the wall time, where the results and the
HTML report are and how to open them, or which jobs failed and where their logs are.

What ran and what failed come from Snakemake's job events, as attnexp.runconsole records them (never from the
console's text); the wall time from the name of Snakemake's log of the run. Pure Python, so the workflow can import
it at parse time.
"""

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from attnexp import paths
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


def wall_time(log_path: LogPath, now: datetime | None = None) -> str:
    """Time since the run started (the start time is in the name of Snakemake's log), as H:MM:SS."""
    match = _STARTED.search(_logfile(log_path) or "")
    if not match:
        return "unknown"
    seconds = int(((now or datetime.now()) - datetime.strptime(match.group(1), "%Y-%m-%dT%H%M%S")).total_seconds())
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _newest_result(workdir: Path) -> float:
    """The latest modification time of a table or figure (what the report shows)."""
    folders = [workdir / paths.RESULTS / kind for kind in ("tables", "figures")]
    return max((p.stat().st_mtime for folder in folders for p in folder.rglob("*.*")), default=0.0)


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
    log_path: LogPath, workdir: str | Path = ".", now: datetime | None = None, events: JobEvents | None = None
) -> str:
    """The closing summary of a successful run: what ran per stage (`events`: this run's, by default those
    attnexp.runconsole records), wall time, where results and report are."""
    workdir = Path(workdir).resolve()
    events = events or current()
    report = workdir / paths.REPORT
    lines = [
        f"== attnexp: finished in {wall_time(log_path, now)} ==",
        f"Ran:      {_ran(events)}",
        f"Results:  {workdir / paths.RESULTS}/  (tables: {paths.RESULTS}/tables/{{jw,wp,az}}/,"
        f" figures: {paths.RESULTS}/figures/{{jw,wp,az}}/)",
        f"Logs:     {workdir / paths.LOGS}/  (per-epoch lines of every training job)",
    ]
    if report.exists() and _newest_result(workdir) > report.stat().st_mtime:
        lines.append(f"Report:   {report} is older than the results: `snakemake report` (or `make report`) rebuilds it")
    elif report.exists():
        lines.append(f"Report:   {report}  (open it in a browser, e.g. `xdg-open {paths.REPORT}`)")
    else:
        lines.append(f"Report:   not built yet: `snakemake report` (or `make report`) writes {paths.REPORT}")
    return "\n".join(lines)


def error_summary(
    log_path: LogPath, workdir: str | Path = ".", now: datetime | None = None, events: JobEvents | None = None
) -> str:
    """The closing summary of a failed run: the failed jobs (rule, dataset, model, seed) with their logs, from
    Snakemake's job events whatever `quiet` hid, what finished, how to resume."""
    events = events or current()
    lines = [f"== attnexp: FAILED after {wall_time(log_path, now)} =="]
    for job in events.failed if events else []:
        where = f"  log: {', '.join(job['log'])}" if job["log"] else ""
        lines.append(f"Failed:   {job['rule']}  {labels(job['wildcards'])}".rstrip() + where)
    if not (events and events.failed):
        lines.append("Failed:   no job (the workflow itself stopped: see the messages above)")
    lines += [
        f"Finished: {_ran(events)}; their outputs are kept.",
        "Fix the cause and run the same command again: only what is missing or incomplete runs.",
    ]
    if _logfile(log_path):
        lines.append(f"Full log: {_logfile(log_path)}")
    return "\n".join(lines)
