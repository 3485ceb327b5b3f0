"""Can every configured Hugging Face checkpoint be loaded offline? The config check runs this at parse time (from
`attnexp.config`, before any job), where a plain Snakemake environment has no torch, pandas, numpy or transformers:
this module imports none of them, and `huggingface_hub` only when a hub name must be looked up in the cache (with
a fallback to the cache's folder layout where that package is missing).
"""

import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["checkpoint_location_help", "checkpoint_problem", "checkpoint_problems"]

# huggingface_hub's validate_repo_id: [namespace/]name of letters, digits, '-', '_', '.', at most 96 characters,
# neither starting nor ending with '-' or '.', without '--' or '..'.
_HUB_NAME = re.compile(r"(?!.*(--|\.\.))[A-Za-z0-9_.-]{1,96}(/[A-Za-z0-9_.-]{1,96})?")


def _hub_cache() -> str:
    """The Hugging Face hub cache folder (huggingface_hub's HF_HUB_CACHE; its default rule where it is missing)."""
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:
        home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
        return os.path.expanduser(os.environ.get("HF_HUB_CACHE") or os.path.join(home, "hub"))
    return HF_HUB_CACHE


def _in_hub_cache(checkpoint: str) -> bool:
    """Whether the cache holds the checkpoint's config.json (any revision without huggingface_hub: its folder layout)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        snapshots = Path(_hub_cache()) / f"models--{checkpoint.replace('/', '--')}" / "snapshots"
        return any(snapshots.glob("*/config.json"))
    try:
        return isinstance(try_to_load_from_cache(checkpoint, "config.json"), str)
    except ValueError:  # huggingface_hub refuses the name (HFValidationError): it cannot be in the cache
        return False


def checkpoint_location_help(checkpoint: str) -> str:
    return (
        f"put a model saved with save_pretrained (config.json, weights, tokenizer files) in a local directory and give "
        f"its path as checkpoint, or place {checkpoint!r} in the Hugging Face cache ({_hub_cache()}, set HF_HOME to move "
        f"it; `huggingface-cli download {checkpoint}` on a machine with internet), or set hf.allow_download: true"
    )


def _valid_hub_name(name: str) -> bool:
    parts = name.split("/")
    return bool(_HUB_NAME.fullmatch(name)) and not any(p[:1] in "-." or p[-1:] in "-." for p in parts)


def _short(text: str, limit: int = 80) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def checkpoint_problem(checkpoint: str, allow_download: bool = False) -> str | None:
    """None if `checkpoint` (a directory or a hub name) can be loaded offline; otherwise what is missing and where to put it.

    Checks only files (config and tokenizer present), without importing transformers' models.
    """
    path = Path(checkpoint).expanduser()
    if path.is_dir():
        missing = [name for name in ("config.json",) if not (path / name).exists()]
        if missing:
            return f"hf checkpoint directory {path} has no {', '.join(missing)}; save the model there with save_pretrained"
        return None
    pathlike = "/" in checkpoint and (checkpoint.startswith((".", "/", "~")) or bool(path.suffix))
    if not pathlike and not _valid_hub_name(checkpoint):
        return (
            f"hf checkpoint {_short(checkpoint)} is neither a local directory nor a valid hub name (letters, digits, "
            "'-', '_', '.', one '/' between owner and name, no spaces); give the path of a save_pretrained directory "
            "or a hub name such as 'distilbert-base-uncased'"
        )
    if allow_download:
        return None
    if pathlike:
        return f"hf checkpoint {checkpoint!r}: directory {path} does not exist; " + checkpoint_location_help(checkpoint)
    if not _in_hub_cache(checkpoint):
        return (
            f"hf checkpoint {checkpoint!r} is neither a local directory nor in the Hugging Face cache; "
            + checkpoint_location_help(checkpoint)
        )
    return None


def checkpoint_problems(config: Mapping) -> list[str]:
    """Every configured model whose checkpoint cannot be loaded (message says where to put it); [] when all can."""
    section = config["hf"]
    if not section["datasets"]:
        return []
    problems = [checkpoint_problem(str(m["checkpoint"]), section["allow_download"]) for m in section["models"].values()]
    return [f"hf.models.{name}: {p}" for name, p in zip(section["models"], problems, strict=True) if p]
