"""20 Newsgroups bydate, baseball vs hockey, stripped and split as J&W did with scikit-learn's loader (§3.3)."""

import json
import lzma
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets._twenty_newsgroups import strip_newsgroup_footer, strip_newsgroup_header, strip_newsgroup_quoting
from sklearn.model_selection import train_test_split

from attnexp.datasets.tokenize import clean_newsgroups

GROUPS = {"rec.sport.baseball": 0, "rec.sport.hockey": 1}
SPLIT_SEED = 13478


def read_bydate_jsonl(path: Path) -> pd.DataFrame:
    with lzma.open(path, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    return pd.DataFrame(
        {
            "split": [r["split"] for r in records],
            "group": [r["label_name"] for r in records],
            "name": [str(r["id"]) for r in records],
            "text": [r["text"] for r in records],
        }
    )


def read_bydate_tree(root: Path) -> pd.DataFrame:
    """The official `20news-bydate-{train,test}/<group>/<id>` tree, decoded as latin-1 like scikit-learn."""
    rows = []
    for split in ("train", "test"):
        for folder in sorted(p for p in (root / f"20news-bydate-{split}").iterdir() if p.is_dir()):
            rows += [(split, folder.name, f.name, f.read_bytes().decode("latin-1")) for f in sorted(folder.iterdir())]
    return pd.DataFrame(rows, columns=["split", "group", "name", "text"])


def loader_order(frame: pd.DataFrame) -> pd.DataFrame:
    """`fetch_20newsgroups(subset='all')` order: per subset sorted files permuted by RandomState(0), then all by 42."""
    parts = []
    for split in ("train", "test"):
        part = frame[frame["split"] == split].sort_values(["group", "name"], kind="stable")
        index = np.arange(len(part))
        np.random.RandomState(0).shuffle(index)
        parts.append(part.iloc[index])
    everything = pd.concat(parts, ignore_index=True)
    index = np.arange(len(everything))
    np.random.RandomState(42).shuffle(index)
    return everything.iloc[index].reset_index(drop=True)


def strip(text: str) -> str:
    return strip_newsgroup_quoting(strip_newsgroup_footer(strip_newsgroup_header(text)))


def newsgroups_splits(frame: pd.DataFrame, seed: int = SPLIT_SEED) -> pd.DataFrame:
    """Baseball docs then hockey docs; stripped and cleaned; empties dropped; stratified 20% test, 20% dev."""
    ordered = loader_order(frame)
    docs = pd.concat([ordered[ordered["group"] == g] for g in GROUPS], ignore_index=True)
    docs = docs.assign(
        text=docs["text"].map(lambda t: clean_newsgroups(strip(t))),
        label=docs["group"].map(GROUPS),
        key=docs["split"] + "/" + docs["group"] + "/" + docs["name"],
    )
    docs = docs[docs["text"].str.len() > 0].reset_index(drop=True)
    rest, test = train_test_split(docs, test_size=0.2, random_state=seed, stratify=docs["label"])
    train, dev = train_test_split(rest, test_size=0.2, random_state=seed, stratify=rest["label"])
    out = pd.concat([train.assign(split="train"), dev.assign(split="dev"), test.assign(split="test")], ignore_index=True)
    return out[["split", "text", "label", "key"]]


def read_newsgroups(files: dict[str, Path]) -> pd.DataFrame:
    frame = read_bydate_jsonl(files["posts"]) if "posts" in files else read_bydate_tree(files["train_dir"].parent)
    return newsgroups_splits(frame)
