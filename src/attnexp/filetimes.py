"""Input files whose modification time lies in the future: Snakemake stops after each job that reads one (its
output older than its input, "clock skew"), so the config's checks and the plan refuse them before any job.

Standard library only: the config is validated while the Snakefile is parsed."""

import os
import stat
import time
from datetime import datetime
from pathlib import Path

FUTURE_TOLERANCE_S = 5.0  # how far in the future an input's mtime may lie: timestamp granularity, a file server's clock


def future_mtime_problem(path: str | Path, what: str, now: float | None = None) -> str | None:
    """Why the file at `path` (described by `what`) cannot be an input: its modification time lies more than
    FUTURE_TOLERANCE_S seconds after `now` (its own or, for a symlink, its target's, as Snakemake reads them); None
    when it does not, or when there is no file (reported elsewhere)."""
    try:
        own, target = os.lstat(path), os.stat(path)
    except OSError:
        return None
    now = time.time() if now is None else now
    mtime = max(own.st_mtime, target.st_mtime)
    if mtime - now <= FUTURE_TOLERANCE_S:
        return None
    fix = f"`touch {path}`"
    if stat.S_ISLNK(own.st_mode) and own.st_mtime - now > FUTURE_TOLERANCE_S:
        fix = f"`touch -h {path}`" + (f" and `touch {path}`" if target.st_mtime - now > FUTURE_TOLERANCE_S else "")
    shown = "%Y-%m-%d %H:%M:%S"
    return (
        f"{what} {path} has modification time {datetime.fromtimestamp(mtime).strftime(shown)}, "
        f"{_duration(mtime - now)} after now ({datetime.fromtimestamp(now).strftime(shown)}); give it the current time "
        f"with {fix} (or fix the clock of the machine that wrote it)"
    )


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}" if unit == "days" else f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"
