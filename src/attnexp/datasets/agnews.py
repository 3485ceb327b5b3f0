"""AG News (Zhang et al. 2015), World vs Business, description column only (§3.3)."""

import csv
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

from attnexp.datasets.tokenize import clean

CLASSES = {1: 0, 3: 1}  # World -> 0, Business -> 1


def read_agnews_csv(path: Path, split: str) -> pd.DataFrame:
    """Headerless `class,title,description`; rows of other classes dropped."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    bad = [i + 1 for i, row in enumerate(rows) if len(row) != 3 or not row[0].isdigit()]
    if bad:
        raise ValueError(f"{path}: line(s) {bad[:5]} are not `class,title,description` rows; the file looks corrupt or truncated")
    kept = [(i, int(r[0]), r[2]) for i, r in enumerate(rows) if int(r[0]) in CLASSES]
    return pd.DataFrame(
        {
            "split": split,
            "text": [clean(t) for _, _, t in kept],
            "label": [CLASSES[c] for _, c, _ in kept],
            "key": [f"{split}-{i}" for i, _, _ in kept],
        }
    )


def read_agnews(files: dict[str, Path]) -> pd.DataFrame:
    """Official train/test; dev is carved from train by the shared preprocessing."""
    return pd.concat([read_agnews_csv(files["train"], "train"), read_agnews_csv(files["test"], "test")], ignore_index=True)


def read_agnews_testonly(files: dict[str, Path], seed: int = 16377) -> pd.DataFrame:
    """Fallback: the 3,800 World/Business test rows, stratified 20% -> test; dev carved from the rest later."""
    frame = read_agnews_csv(files["test"], "test")
    train, test = train_test_split(frame, test_size=0.2, random_state=seed, stratify=frame["label"])
    return pd.concat([train.assign(split="train"), test.assign(split="test")], ignore_index=True)
