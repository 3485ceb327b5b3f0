"""Hugging Face data: a grid dataset re-tokenized by a model's own tokenizer (the jobs: `attnexp.pipeline.hf`).

Tokenization keeps the grid's preprocessing decisions: the same instances (ids, splits, labels, length
filter) as `results/preprocessed/{dataset}`, their text read again from the raw files (so no word becomes
[UNK] because it is missing from the training vocabulary), tokenized with [CLS] and [SEP] (a decoder's tokenizer: between
[BOS] and [EOS], `framed_ids`), truncated to `max_length` pieces. A pair (NLI premise / hypothesis, QA passage /
question) is packed into one sequence, [CLS] a [SEP] b [SEP]. Planted rationales index words, not pieces, so they are dropped.
"""

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from attnexp.errors import ConfigError


def load_tokenizer(checkpoint: str, allow_download: bool = False, gguf_file: str | None = None):
    """The checkpoint's tokenizer; with `gguf_file`, the one that GGUF file of the checkpoint describes."""
    from transformers import AutoTokenizer

    from attnexp.models.hf.checkpoints import checkpoint_problem

    problem = checkpoint_problem(checkpoint, allow_download, gguf_file)
    if problem:
        raise ConfigError(problem)
    gguf = {} if gguf_file is None else {"gguf_file": gguf_file}
    return AutoTokenizer.from_pretrained(checkpoint, local_files_only=not allow_download, **gguf)


def _frames(tokenizer) -> bool:
    """Whether the tokenizer puts a special token at both ends of a text (BERT's [CLS] ... [SEP], RoBERTa's
    <s> ... </s>); decoders' tokenizers do not (GPT-2 adds none, Llama only its BOS)."""
    if getattr(tokenizer, "all_special_ids", None) is None:  # a tokenizer-like object: its ids as they come
        return True
    ids = tokenizer("a")["input_ids"]
    specials = set(tokenizer.all_special_ids)
    return len(ids) >= 2 and ids[0] in specials and ids[-1] in specials


def framed_ids(tokenizer, first: list[str], second: list[str] | None, max_length: int | None) -> list[list[int]]:
    """Token ids of each text (and its pair) with a special token at both ends, as every analysis reads them (the
    rankable tokens between): the tokenizer's own framing where it has one (a pair packed [CLS] a [SEP] b [SEP]);
    otherwise a decoder's: [BOS] a [EOS] (its EOS where it has no BOS; a pair [BOS] a [EOS] b [EOS]), truncated to
    `max_length` in all. A decoder classifier is explained at that last token."""
    if _frames(tokenizer):
        if len(first) == 1:  # one text (the API's): any tokenizer-like object takes a string
            pair = () if second is None else (second[0],)
            return [list(map(int, tokenizer(first[0], *pair, truncation=True, max_length=max_length)["input_ids"]))]
        return [list(map(int, ids)) for ids in tokenizer(first, second, truncation=True, max_length=max_length)["input_ids"]]
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ValueError(f"{type(tokenizer).__name__} has neither framing special tokens nor an EOS token to frame texts")
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else eos
    room = None if max_length is None else max_length - (2 if second is None else 3)
    pairs = [(a,) for a in first] if second is None else list(zip(first, second, strict=True))
    out = []
    for pair in pairs:
        parts = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in pair]
        keep = [len(part) for part in parts]
        while room is not None and sum(keep) > room:  # longest first, as the tokenizers truncate pairs (counts only)
            keep[keep.index(max(keep))] -= 1
        parts = [part[:n] for part, n in zip(parts, keep, strict=True)]
        ids = [bos, *parts[0], *([eos, *parts[1]] if len(parts) > 1 else []), eos]
        out.append(list(map(int, ids)))
    return out


def hf_instances(
    instances: pd.DataFrame, meta: dict, texts: pd.DataFrame, tokenizer, max_length: int, joiner: str = ""
) -> tuple[pd.DataFrame, dict]:
    """The grid's `instances` with `tokens` from `tokenizer` over `texts` (instance_id, text[, question]); `joiner`
    (a prompt's whitespace before {text}) is tokenized with each text, as it is in the filled prompt.

    Dev and test are re-sorted by their new length (stable), as preprocessing sorts them.
    """
    text = texts.set_index("instance_id")
    missing = sorted(set(instances["instance_id"]) - set(text.index))
    if missing:
        raise ValueError(f"{len(missing)} preprocessed instances have no raw text (e.g. {missing[:3]}); rerun preprocessing")
    first = [joiner + t for t in text.loc[instances["instance_id"], "text"]]
    second = text.loc[instances["instance_id"], "question"].tolist() if "question" in text else None
    encoded = framed_ids(tokenizer, first, second, max_length)
    out = instances.drop(columns=[c for c in ("question", "tokens") if c in instances]).copy()
    out["tokens"] = encoded
    full = framed_ids(tokenizer, first, second, None)
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


def verbalizer_words(verbalizer: Mapping[str, str], classes: list[str], where: str) -> list[str]:
    """The verbalizer's words in the dataset's class order; a class without a word (or a word for no class) is named."""
    missing = [c for c in classes if c not in verbalizer]
    extra = [c for c in verbalizer if c not in classes]
    if missing or extra:
        raise ConfigError(
            f"{where}.verbalizer: the dataset's classes are {', '.join(map(repr, classes))}"
            + (f"; no word for {', '.join(map(repr, missing))}" if missing else "")
            + (f"; {', '.join(map(repr, extra))} is no class" if extra else "")
            + ": give one word per class, keyed by the class names"
        )
    return [verbalizer[c] for c in classes]
