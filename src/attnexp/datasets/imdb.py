"""IMDB (Maas et al. 2011) with J&W's Keras-style tokenization and their 400-token split recipe (§3.3)."""

import gzip
import json
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

from attnexp.datasets.tokenize import keras_tokens

MAX_TOKENS = 400  # J&W keep reviews with n < 400 before splitting
SPLIT_SEED = 1378


def read_imdb_jsonl(path: Path) -> pd.DataFrame:
    """The repacked `aclImdb_train_test.jsonl.gz` (fields split, label, file, text)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    return pd.DataFrame(
        {
            "split": [r["split"] for r in records],
            "text": [r["text"] for r in records],
            "label": [int(r["label"]) for r in records],
            "key": [r["file"].removesuffix(".txt") for r in records],
        }
    )


def read_imdb_tree(root: Path) -> pd.DataFrame:
    """The official `aclImdb/{train,test}/{neg,pos}/<id>_<rating>.txt` tree, neg then pos, by id."""
    rows = []
    for split in ("train", "test"):
        for label, polarity in enumerate(("neg", "pos")):
            files = sorted((root / split / polarity).glob("*.txt"), key=lambda p: int(p.stem.split("_")[0]))
            if not files:
                raise FileNotFoundError(f"no reviews under {root / split / polarity}; is the aclImdb archive fully extracted?")
            rows += [(split, f.read_text(encoding="utf-8"), label, f"{split}/{polarity}/{f.stem}") for f in files]
    return pd.DataFrame(rows, columns=["split", "text", "label", "key"])


def imdb_splits(frame: pd.DataFrame, seed: int = SPLIT_SEED) -> pd.DataFrame:
    """Keras tokens; n < 400; train -> 80% train / 20% dev; test -> a random 20% kept."""
    frame = frame.assign(text=frame["text"].map(keras_tokens))
    frame = frame[frame["text"].str.split().str.len() < MAX_TOKENS]
    train_part = frame[frame["split"] == "train"]
    test_part = frame[frame["split"] == "test"]
    train, dev = train_test_split(train_part, train_size=0.8, random_state=seed)
    test, _ = train_test_split(test_part, train_size=0.2, random_state=seed)
    return pd.concat([train.assign(split="train"), dev.assign(split="dev"), test.assign(split="test")], ignore_index=True)


def read_imdb(files: dict[str, Path]) -> pd.DataFrame:
    frame = read_imdb_jsonl(files["reviews"]) if "reviews" in files else read_imdb_tree(files["readme"].parent)
    return imdb_splits(frame)
