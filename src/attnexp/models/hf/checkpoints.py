"""Can every configured Hugging Face checkpoint be loaded offline? The config check runs this at parse time (from
`attnexp.config`, before any job), where a plain Snakemake environment has no torch, pandas, numpy or transformers:
this module imports none of them, and `huggingface_hub` only when a hub name must be looked up in the cache (with
a fallback to the cache's folder layout where that package is missing).
"""

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["checkpoint_location_help", "checkpoint_problem", "checkpoint_problems", "gguf_problem", "kind_problems"]

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


def _in_hub_cache(checkpoint: str, filename: str = "config.json") -> bool:
    """Whether the cache holds the checkpoint's `filename` (its config.json; a GGUF file's name) (any revision without
    huggingface_hub: its folder layout)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        snapshots = Path(_hub_cache()) / f"models--{checkpoint.replace('/', '--')}" / "snapshots"
        return any(p.is_file() for p in snapshots.glob(f"*/{filename}"))
    try:
        return isinstance(try_to_load_from_cache(checkpoint, filename), str)
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


def gguf_problem(checkpoint: str, gguf_file: str, allow_download: bool = False) -> str | None:
    """None if the GGUF file `gguf_file` can be read offline: a name inside the checkpoint directory (or the hub
    repository `checkpoint`, in the cache), or an absolute path (then `checkpoint` must be a local directory);
    otherwise what is missing and the fix.
    transformers resolves it the same way (`from_pretrained(checkpoint, gguf_file=gguf_file)`)."""
    file, folder = Path(gguf_file).expanduser(), Path(checkpoint).expanduser()
    if file.is_absolute():
        if not file.is_file():
            return f"GGUF file {file} does not exist; give the path of an existing .gguf file or its name inside checkpoint"
        if not folder.is_dir():  # transformers joins the two: a hub name takes no absolute file name
            return (
                f"an absolute gguf_file ({file}) needs checkpoint to be a local directory, not {checkpoint!r}; set "
                f"checkpoint to {str(file.parent)!r} and gguf_file to {file.name!r}"
            )
        return None
    if folder.is_dir():
        if (folder / file).is_file():
            return None
        present = sorted(p.name for p in folder.glob("*.gguf"))
        holds = f"it holds {', '.join(present)}" if present else "it holds no .gguf file"
        return (
            f"GGUF file {gguf_file!r} is not in checkpoint directory {folder} ({holds}); give the name of a .gguf file "
            "inside that directory, or an absolute path"
        )
    if allow_download or not _valid_hub_name(checkpoint):  # a bad name: checkpoint_problem says so
        return None
    if not _in_hub_cache(checkpoint, gguf_file):
        return (
            f"GGUF file {gguf_file!r} of {checkpoint!r} is neither in a local directory nor in the Hugging Face cache "
            f"({_hub_cache()}); give checkpoint as the local directory that holds it (or its absolute path), run "
            f"`huggingface-cli download {checkpoint} {gguf_file}` on a machine with internet, or set hf.allow_download: true"
        )
    return None


def checkpoint_problem(checkpoint: str, allow_download: bool = False, gguf_file: str | None = None) -> str | None:
    """None if `checkpoint` (a directory or a hub name) can be loaded offline; otherwise what is missing and where to put it.
    With `gguf_file` (a GGUF file inside the directory or repository, or an absolute path) the weights, config and
    tokenizer come from that file: a directory needs no config.json, a hub name only the file in the cache.

    Checks only files (config and tokenizer present), without importing transformers' models.
    """
    path = Path(checkpoint).expanduser()
    if gguf_file is not None:
        problem = gguf_problem(checkpoint, gguf_file, allow_download)
        if problem:
            return f"hf gguf_file: {problem}"
        if path.is_dir() or allow_download:
            return None
        if _valid_hub_name(checkpoint) and _in_hub_cache(checkpoint, gguf_file):
            return None
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
    problems = []
    for name, model in section["models"].items():
        gguf_file = model.get("gguf_file")
        if gguf_file is not None:
            problem = gguf_problem(str(model["checkpoint"]), str(gguf_file), section["allow_download"])
            if problem:
                problems.append(f"hf.models.{name}.gguf_file: {problem}")
                continue
        problem = checkpoint_problem(str(model["checkpoint"]), section["allow_download"], gguf_file)
        if problem:
            problems.append(f"hf.models.{name}: {problem}")
            continue
        problems += [f"hf.models.{name}.{key}: {problem}" for key, problem in kind_problems(model)]
    return problems


def kind_problems(model: Mapping) -> list[tuple[str, str]]:
    """(key, problem) of one `hf.models` entry's kind: its prompt and verbalizer, fine-tuning, and where the checkpoint is
    a local directory and transformers is installed, whether its architecture serves the kind and whether two classes'
    words share their first sub-token."""
    kind = model.get("kind", "classifier")
    if kind == "classifier":
        return []
    from attnexp.models.hf.prompts import template_problem

    problem = template_problem(kind, model.get("prompt"), model.get("verbalizer"))
    if problem:
        return [("verbalizer" if problem.startswith("verbalizer") else "prompt", problem.removeprefix("verbalizer: "))]
    if model.get("finetune"):
        return [("finetune", f"a {kind} model is used as given, never fine-tuned: set finetune: false")]
    folder = Path(str(model["checkpoint"])).expanduser()
    if model.get("gguf_file") is not None or not (folder / "config.json").is_file():
        return []  # the job checks these when it loads the model
    try:
        from transformers import AutoTokenizer

        from attnexp.models.hf.architectures import architecture_problem
        from attnexp.models.hf.prompts import verbalizer_problem
    except ImportError:  # a plain Snakemake environment: the hf_tokenize job checks them
        return []
    problem = architecture_problem(kind, json.loads((folder / "config.json").read_text()).get("model_type", "?"))
    if problem:
        return [("kind", problem)]
    problem = verbalizer_problem(AutoTokenizer.from_pretrained(str(folder), local_files_only=True), dict(model["verbalizer"]))
    return [("verbalizer", problem)] if problem else []
