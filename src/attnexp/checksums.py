"""The sha256 sidecars of written results (`<file>.sha256`, `sha256sum` format): computing and verifying them, and
how to rebuild a file that fails. Pure Python (no pandas, torch or yaml), so the workflow's console summary
(`attnexp.runsummary`) can verify what it reads; `attnexp.io` writes the sidecars and re-exports these."""

import hashlib
import os
from pathlib import Path

from attnexp.errors import CorruptFileError
from attnexp.paths import checksum_file


def rebuild(path: str | os.PathLike) -> str:
    """How to rebuild `path` and everything made from it. Snakemake (since 7.7) does not rebuild a deleted
    intermediate file whose dependents exist, nor a damaged one: the file must be forced (docs/reliability.md,
    "Rebuilding one file")."""
    return (
        f"rebuild it and what depends on it with `snakemake --cores 1 --forcerun {path}` (run where you ran the "
        "workflow; add your --configfile after it)"
    )


def sha256(path: str | os.PathLike) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def verify_checksum(path: str | os.PathLike) -> None:
    """Raise CorruptFileError when `path` no longer matches the sha256 recorded beside it when it was written, or
    when that record is missing (a deleted sidecar would otherwise turn verification off)."""
    sidecar = Path(checksum_file(str(path)))
    if not sidecar.exists():
        if not Path(path).exists():
            raise FileNotFoundError(path)
        raise CorruptFileError(
            f"{path} has no checksum file {sidecar.name} beside it (deleted, or the file was copied without it), so "
            f"its content cannot be verified. Do not use it: {rebuild(path)}."
        )
    expected = sidecar.read_text().split()[0] if sidecar.read_text().strip() else ""
    if sha256(path) != expected:
        raise CorruptFileError(
            f"{path} is corrupt: it was changed after it was written (its sha256 differs from the one recorded in "
            f"{sidecar.name} then: an edit, a damaged disk or copy). Do not use it: {rebuild(path)}."
        )
