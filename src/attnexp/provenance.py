"""Which code produced an output: the package version and, in a git checkout, the commit and whether the
working tree had uncommitted changes. Recorded in every run config, meta.json and analysis config."""

import functools
import subprocess
from pathlib import Path

from attnexp import __version__

_CHECKOUT = Path(__file__).resolve().parents[2]  # src/attnexp/ -> the repository root, when run from a checkout


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(_CHECKOUT), *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.cache
def code_version() -> dict:
    """{"package": version, "commit": sha or None (not a git checkout), "dirty": bool or None}; tracked files
    only count towards `dirty` (results/ and other untracked files do not)."""
    commit = _git("rev-parse", "HEAD") if (_CHECKOUT / ".git").exists() else None
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"package": __version__, "commit": commit, "dirty": None if status is None else bool(status)}
