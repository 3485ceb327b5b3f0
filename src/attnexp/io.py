"""Atomic file output: a file either exists complete or not at all, so killed runs resume cleanly.

Files land with the permissions the umask gives (a shared results folder stays readable by collaborators).
Checkpoints, tables and records (`write_parquet`, `write_csv`, `write_json`, `write_yaml`,
`write_bytes(..., checksum=True)`) also get a sidecar `<file>.sha256` in `sha256sum` format, which the readers here
verify (`read_parquet`, `read_csv`, `read_json`, `read_yaml`, `models.checkpoint.read_checkpoint`), so a flipped byte
or an edit is caught instead of silently changing the numbers (an edited `metrics.json` would move Table 1's
near-chance mark; a `meta.json` with its vocabulary cut would end training in an IndexError); a file they read must
have its sidecar (write it with these writers).
"""

import io
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from attnexp.checksums import rebuild, sha256, verify_checksum
from attnexp.errors import CorruptFileError
from attnexp.paths import checksum_file


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


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_bytes(path: str | os.PathLike, data: bytes, checksum: bool = False) -> None:
    with atomic_path(path, checksum=checksum) as tmp:
        tmp.write_bytes(data)


def _read_verified(
    path: str | os.PathLike,
    read: Callable[[], Any],
    errors: tuple[type[Exception], ...],
    problem: str,
    passthrough: type[Exception] | None = None,
    damage: str = "damaged or truncated",
) -> Any:
    """`read()` after checking `path` against its recorded sha256; one of `errors` (but `passthrough`, raised as it
    is) becomes a CorruptFileError naming the file, what is wrong with it (`problem`, e.g. "is not valid JSON") and
    the fix."""
    verify_checksum(path)
    try:
        return read()
    except errors as err:
        if passthrough is not None and isinstance(err, passthrough):
            raise
        raise CorruptFileError(f"{path} {problem} ({err}); the file is {damage}: {rebuild(path)}.") from None


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Strict JSON: NaN and infinities become `null` (bare `NaN` is not JSON); say why in a field beside it. With
    its sha256 sidecar (`read_json` verifies it)."""
    text = json.dumps(_finite(obj), indent=2, sort_keys=True, default=_json_default, allow_nan=False)
    write_bytes(path, (text + "\n").encode(), checksum=True)


def read_json(path: str | os.PathLike) -> Any:
    """A JSON file written by `write_json`, after checking its recorded sha256 (`meta.json`, `metrics.json`); a
    changed or damaged one raises CorruptFileError naming it and the fix."""
    return _read_verified(
        path, lambda: json.loads(Path(path).read_text()), (json.JSONDecodeError, UnicodeDecodeError), "is not valid JSON"
    )


def write_yaml(path: str | os.PathLike, obj: Any) -> None:
    """YAML with its sha256 sidecar (a run's `config.yaml`, `analysis_config.yaml`; `read_yaml` verifies it)."""
    write_bytes(path, yaml.safe_dump(obj, sort_keys=True).encode(), checksum=True)


def read_yaml(path: str | os.PathLike) -> Any:
    """A YAML file written by `write_yaml`, after checking its recorded sha256; a changed or damaged one raises
    CorruptFileError naming it and the fix."""
    return _read_verified(
        path,
        lambda: yaml.safe_load(Path(path).read_text(encoding="utf-8")),
        (yaml.YAMLError, UnicodeDecodeError),
        "is not valid YAML",
    )


def write_parquet(path: str | os.PathLike, frame: pd.DataFrame) -> None:
    with atomic_path(path, checksum=True) as tmp:
        frame.to_parquet(tmp, index=False)


def read_parquet(path: str | os.PathLike, **kwargs) -> pd.DataFrame:
    """`pd.read_parquet` after checking the file against its recorded sha256; damage names the file."""
    return _read_verified(
        path, lambda: pd.read_parquet(path, **kwargs), (OSError, ValueError), "cannot be read as Parquet", FileNotFoundError
    )


def write_csv(path: str | os.PathLike, frame: pd.DataFrame) -> None:
    with atomic_path(path, checksum=True) as tmp:
        frame.to_csv(tmp, index=False)


def read_csv(path: str | os.PathLike, **kwargs) -> pd.DataFrame:
    """`pd.read_csv` of a table written by `write_csv`, after checking its recorded sha256."""
    return _read_verified(
        path,
        lambda: pd.read_csv(path, **kwargs),
        (pd.errors.ParserError, UnicodeDecodeError),
        "cannot be read as CSV",
        damage="damaged",
    )


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
