"""Hugging Face data: a grid dataset re-tokenized by a model's own tokenizer (the jobs: `attnexp.pipeline.hf`).

Tokenization keeps the grid's preprocessing decisions: the same instances (ids, splits, labels, length
filter) as `results/preprocessed/{dataset}`, their text read again from the raw files (so no word becomes
[UNK] because it is missing from the training vocabulary), WordPiece-tokenized with [CLS] and [SEP],
truncated to `max_length` pieces. A pair (NLI premise / hypothesis, QA passage / question) is packed into
one sequence, [CLS] a [SEP] b [SEP]. Planted rationales index words, not pieces, so they are dropped.
"""

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from attnexp.errors import ConfigError


def load_tokenizer(checkpoint: str, allow_download: bool = False):
    from transformers import AutoTokenizer

    from attnexp.models.hf_checkpoints import checkpoint_problem

    problem = checkpoint_problem(checkpoint, allow_download)
    if problem:
        raise ConfigError(problem)
    return AutoTokenizer.from_pretrained(checkpoint, local_files_only=not allow_download)


def hf_instances(
    instances: pd.DataFrame, meta: dict, texts: pd.DataFrame, tokenizer, max_length: int
) -> tuple[pd.DataFrame, dict]:
    """The grid's `instances` with `tokens` from `tokenizer` over `texts` (instance_id, text[, question]).

    Dev and test are re-sorted by their new length (stable), as preprocessing sorts them.
    """
    text = texts.set_index("instance_id")
    missing = sorted(set(instances["instance_id"]) - set(text.index))
    if missing:
        raise ValueError(f"{len(missing)} preprocessed instances have no raw text (e.g. {missing[:3]}); rerun preprocessing")
    first = text.loc[instances["instance_id"], "text"].tolist()
    second = text.loc[instances["instance_id"], "question"].tolist() if "question" in text else None
    encoded = tokenizer(first, second, truncation=True, max_length=max_length)["input_ids"]
    out = instances.drop(columns=[c for c in ("question", "tokens") if c in instances]).copy()
    out["tokens"] = [list(map(int, ids)) for ids in encoded]
    full = tokenizer(first, second, truncation=False)["input_ids"]
    truncated = int(sum(len(f) > max_length for f in full))
    out["length"] = out["tokens"].map(len) - 2
    out["rationale"] = [[] for _ in range(len(out))]
    parts = [out[out["split"] == "train"]]
    parts += [out[out["split"] == s].sort_values("length", kind="stable") for s in ("dev", "test")]
    out = pd.concat(parts, ignore_index=True)[
        ["instance_id", "split", "tokens", "label", "length", "rationale"] + (["candidates"] if "candidates" in out else [])
    ]
    vocab = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    hf_meta = {
        **meta,
        "vocab": vocab,
        "mean_length": float(out["length"].mean()),
        "tokenizer": {
            "class": type(tokenizer).__name__,
            "max_length": max_length,
            "truncated": truncated,
            "pairs_packed": second is not None,
        },
    }
    return out, hf_meta


def raw_texts(dataset: str, files: Mapping[str, str | Path], declaration: dict | None = None) -> pd.DataFrame:
    """instance_id, text (and question) of every raw instance of a dataset, read from its raw `files` (role ->
    path) as preprocessing reads them (`declaration`: the config's `user_datasets.<dataset>` of a dataset declared
    there)."""
    from attnexp.datasets import get_dataset
    from attnexp.datasets.user import user_spec

    spec = user_spec(dataset, declaration) if declaration else get_dataset(dataset)
    frame = spec.read({role: Path(path) for role, path in files.items()})
    columns = {"instance_id": [f"{spec.name}/{k}" for k in frame["key"]], "text": frame["text"].astype(str)}
    if "question" in frame:
        columns["question"] = frame["question"].astype(str)
    return pd.DataFrame(columns)
