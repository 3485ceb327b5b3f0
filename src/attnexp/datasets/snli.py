"""SNLI 1.0 (Bowman et al. 2015): premise = passage (attended), hypothesis = question, both cleaned (§3.3)."""

import json
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

from attnexp.datasets.readers import read_snli_tsv
from attnexp.datasets.tokenize import clean


def read_snli_jsonl(paths: dict[str, Path]) -> pd.DataFrame:
    """The official `snli_1.0_{split}.jsonl`; pairs without a gold label (`-`) dropped."""
    frames = []
    for split, path in paths.items():
        with open(path, encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle if line.strip()]
        frames.append(
            pd.DataFrame(
                {
                    "split": split,
                    "text": [r["sentence1"] for r in records],
                    "question": [r["sentence2"] for r in records],
                    "label": [r["gold_label"] for r in records],
                    "key": [f"{split}-{r.get('pairID', i)}" for i, r in enumerate(records)],
                }
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    return frame[frame["label"] != "-"].reset_index(drop=True)


def _clean_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(text=frame["text"].map(clean), question=frame["question"].map(clean))


def read_snli(files: dict[str, Path], splits: tuple[str, ...] = ("train", "dev", "test")) -> pd.DataFrame:
    """Either layout: official JSONL (`jsonl_*` roles) or the TSV copies (`tsv_*` roles, HF label ids)."""
    if all(f"jsonl_{s}" in files for s in splits):
        frame = read_snli_jsonl({s: files[f"jsonl_{s}"] for s in splits})
    else:
        frame = read_snli_tsv({s: files[f"tsv_{s}"] for s in splits})
    return _clean_pairs(frame)


def read_snli_devtrain(files: dict[str, Path], seed: int = 16377) -> pd.DataFrame:
    """Fallback: train on the official dev set (15% held out for selection), test on the official test set."""
    frame = read_snli(files, splits=("dev", "test"))
    dev = frame[frame["split"] == "dev"]
    train, held = train_test_split(dev, test_size=0.15, random_state=seed)
    return pd.concat([train.assign(split="train"), held.assign(split="dev"), frame[frame["split"] == "test"]], ignore_index=True)
