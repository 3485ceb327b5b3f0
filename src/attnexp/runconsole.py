"""The run's console from Snakemake's job events: one line per finished job naming its rule, dataset, model and seed,
with the count of finished jobs and the elapsed time, and one line per failed job naming its rule and its log,
whatever `quiet` hides; the closing summary (attnexp.runsummary) reads the same record.

`attach(workflow)` (the Snakefile's onstart) hangs a `JobEvents` handler on Snakemake's logger. It reads the
structured records Snakemake logs for every job (the `event` field of Snakemake 9's log records: job_info,
job_finished, progress, job_error), never the console text. The per-job lines replace Snakemake's own "Finished
jobid", "n of m steps", "Execute n jobs" and "Select jobs to execute" lines; they are left out on a terminal where a
logger plugin (`--logger rich`) draws progress bars. Pure Python, so the workflow can import it at parse time.
"""

import logging
import sys
import time
from typing import Any, TextIO

JOB_INFO, JOB_STARTED, JOB_FINISHED, JOB_ERROR, PROGRESS = "job_info", "job_started", "job_finished", "job_error", "progress"
TARGET_RULES = frozenset({"all", "models", "analyses", "tables", "figures", "datasets", "preprocessed", "jw", "wp", "az"})
MODEL_WILDCARDS = ("encoder", "attention", "variant", "hf_model")  # joined with "-" into the model's name


def labels(wildcards: dict[str, Any]) -> str:
    """What a job is about, from its wildcards: dataset, model (encoder-attention, a W&P variant, a Hugging Face
    model), lambda, seed, then any other wildcard as key=value."""
    wildcards = {str(k): str(v) for k, v in (wildcards or {}).items()}
    parts = [wildcards.pop("dataset")] if "dataset" in wildcards else []
    model = "-".join(wildcards.pop(key) for key in MODEL_WILDCARDS if key in wildcards)
    parts += [model] if model else []
    parts += [f"lambda {wildcards.pop('lam')}"] if "lam" in wildcards else []
    parts += [f"seed {wildcards.pop('seed')}"] if "seed" in wildcards else []
    return "  ".join(parts + [f"{k}={v}" for k, v in wildcards.items()])


def elapsed(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class JobEvents(logging.Handler):
    """Snakemake's job events of one run: what each job is (job_info), which finished, which failed and their logs.
    `stream`: where the per-job lines go (None: nowhere); failures are written there too."""

    def __init__(self, stream: TextIO | None = sys.stderr, lines: bool = True, clock=time.monotonic) -> None:
        super().__init__()
        self.stream, self.lines, self.clock = stream, lines, clock
        self.started = clock()
        self.jobs: dict[int, dict] = {}  # jobid -> rule, wildcards, log
        self.finished: list[str] = []  # rules of the finished jobs, in order
        self.failed: list[dict] = []  # rule, wildcards, log of each failed job
        self._pending: list[int] = []  # finished, their line not yet written (written with the next progress count)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            event = str(getattr(record, "event", ""))
            if event == JOB_INFO:
                self.jobs[int(record.jobid)] = {
                    "rule": record.rule_name,
                    "wildcards": dict(getattr(record, "wildcards", None) or {}),
                    "log": list(getattr(record, "log", None) or []),
                }
            elif event == JOB_FINISHED:
                job = self.jobs.get(int(record.job_id), {"rule": "?", "wildcards": {}})
                self.finished.append(job["rule"])
                self._pending.append(int(record.job_id))
            elif event == PROGRESS:
                self._write_finished(int(record.done), int(record.total))
            elif event == JOB_ERROR:
                self._failed(record)
        except Exception:  # noqa: BLE001 - the console must never stop the run
            self.handleError(record)

    def _write_finished(self, done: int, total: int) -> None:
        pending, self._pending = self._pending, []
        if not (self.lines and self.stream):
            return
        for jobid in pending:
            job = self.jobs.get(jobid, {"rule": "?", "wildcards": {}})
            if job["rule"] in TARGET_RULES:
                continue
            width = len(str(total))
            when = elapsed(self.clock() - self.started)
            line = f"[{done:>{width}}/{total} {when}] {job['rule']:<22} {labels(job['wildcards'])}"
            print(line.rstrip(), file=self.stream, flush=True)

    def _failed(self, record: logging.LogRecord) -> None:
        job = self.jobs.get(int(getattr(record, "jobid", -1)), {})
        log = [str(p).removesuffix(" (check log file(s) for error details)") for p in getattr(record, "log", None) or []]
        failure = {
            "rule": getattr(record, "rule_name", None) or job.get("rule", "?"),
            "wildcards": job.get("wildcards", {}),
            "log": log or job.get("log", []),
        }
        self.failed.append(failure)
        if self.stream:
            where = f"  log: {', '.join(failure['log'])}" if failure["log"] else ""
            print(f"FAILED: {failure['rule']}  {labels(failure['wildcards'])}{where}".rstrip(), file=self.stream, flush=True)


_CURRENT: list[JobEvents] = []


def current() -> JobEvents | None:
    """The handler `attach` hung on this run's logger (None before onstart, e.g. in a dry run)."""
    return _CURRENT[-1] if _CURRENT else None


SCHEDULING = "Select jobs to execute..."  # Snakemake's line before each scheduling round (no event of its own)


def _not_progress(record: logging.LogRecord) -> bool:
    """False for what the per-job lines replace: Snakemake's finished, step-count and scheduling lines."""
    return str(getattr(record, "event", "")) not in (JOB_FINISHED, PROGRESS, JOB_STARTED) and record.msg != SCHEDULING


def attach(workflow: Any, stream: TextIO = sys.stderr) -> JobEvents:
    """Hang a JobEvents handler on Snakemake's logger (the Snakefile's onstart). Per-job lines are written unless a
    logger plugin draws progress on a terminal; where they are written, Snakemake's own stream handler stops writing
    its "Finished jobid", step-count and scheduling lines."""
    manager = getattr(workflow, "logger_manager", None)
    logger = getattr(manager, "logger", None) or logging.getLogger("snakemake.logging")  # Snakemake's own logger
    plugin_draws = any(getattr(h, "writes_to_stream", False) for h in getattr(manager, "plugin_handlers", []) or [])
    lines = not (plugin_draws and stream.isatty())
    handler = JobEvents(stream, lines)
    logger.addHandler(handler)
    if lines:
        for other in logger.handlers:
            if other.get_name() == "DefaultStreamHandler":
                other.addFilter(_not_progress)
    _CURRENT.append(handler)
    return handler
