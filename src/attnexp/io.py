"""Atomic file output: a file either exists complete or not at all, so killed runs resume cleanly.

Files land with the permissions the umask gives (a shared results folder stays readable by collaborators).
Checkpoints and tables (`write_parquet`, `write_csv`, `write_bytes(..., checksum=True)`) also get a sidecar
`<file>.sha256` in `sha256sum` format, which the readers here verify (`read_parquet`, `read_csv`,
`models.checkpoint.read_checkpoint`), so a flipped byte is caught instead of silently changing the numbers; a
file they read must have its sidecar (write it with these writers).
"""

import hashlib
import io
import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

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


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | os.PathLike, checksum: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds. The temporary
    file is created private (mode 0600) and gets the umask's permissions just before the rename. `checksum`:
    also write `<path>.sha256` of what was written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        tmp.chmod(0o666 & ~_umask())
        sidecar = Path(checksum_file(str(path)))
        sidecar.unlink(missing_ok=True)  # never a stale checksum beside a new file
        digest = sha256(tmp) if checksum else None
        os.replace(tmp, path)
        if digest:
            write_text(sidecar, f"{digest}  {path.name}\n")
    finally:
        tmp.unlink(missing_ok=True)


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
            f"{path} is corrupt: its sha256 differs from the one recorded in {sidecar.name} when it was written "
            f"(a damaged disk, copy or edit). Do not use it: {rebuild(path)}."
        )


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_bytes(path: str | os.PathLike, data: bytes, checksum: bool = False) -> None:
    with atomic_path(path, checksum=checksum) as tmp:
        tmp.write_bytes(data)


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Strict JSON: NaN and infinities become `null` (bare `NaN` is not JSON); say why in a field beside it."""
    text = json.dumps(_finite(obj), indent=2, sort_keys=True, default=_json_default, allow_nan=False)
    write_text(path, text + "\n")


def read_json(path: str | os.PathLike) -> Any:
    """A JSON file written by `write_json`; a damaged one raises CorruptFileError naming it."""
    try:
        return json.loads(Path(path).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CorruptFileError(f"{path} is not valid JSON ({err}); the file is damaged or truncated: {rebuild(path)}.") from None


def write_yaml(path: str | os.PathLike, obj: Any) -> None:
    write_text(path, yaml.safe_dump(obj, sort_keys=True))


def write_parquet(path: str | os.PathLike, frame: pd.DataFrame) -> None:
    with atomic_path(path, checksum=True) as tmp:
        frame.to_parquet(tmp, index=False)


def read_parquet(path: str | os.PathLike, **kwargs) -> pd.DataFrame:
    """`pd.read_parquet` after checking the file against its recorded sha256; damage names the file."""
    verify_checksum(path)
    try:
        return pd.read_parquet(path, **kwargs)
    except (OSError, ValueError) as err:
        if isinstance(err, FileNotFoundError):
            raise
        raise CorruptFileError(
            f"{path} cannot be read as Parquet ({err}); the file is damaged or truncated: {rebuild(path)}."
        ) from None


def write_csv(path: str | os.PathLike, frame: pd.DataFrame) -> None:
    with atomic_path(path, checksum=True) as tmp:
        frame.to_csv(tmp, index=False)


def read_csv(path: str | os.PathLike, **kwargs) -> pd.DataFrame:
    """`pd.read_csv` of a table written by `write_csv`, after checking its recorded sha256."""
    verify_checksum(path)
    try:
        return pd.read_csv(path, **kwargs)
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise CorruptFileError(f"{path} cannot be read as CSV ({err}); the file is damaged: {rebuild(path)}.") from None


def to_bytes(save, obj: Any) -> bytes:
    """What `save(obj, handle)` writes, as bytes: libraries that record their target's file name (torch.save
    puts it inside the zip archive) then write the same bytes whatever the temporary file is called."""
    buffer = io.BytesIO()
    save(obj, buffer)
    return buffer.getvalue()


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {key: _finite(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(value) for value in obj]
    return obj


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return _finite(obj.item())
    if hasattr(obj, "tolist"):
        return _finite(obj.tolist())
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")
