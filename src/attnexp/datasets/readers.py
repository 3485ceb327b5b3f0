"""Readers that turn raw files into one tidy frame: split, text, label [, question, rationale, key].

`text` and `question` are whitespace-tokenised strings; `rationale` lists 0-based indices into
`text.split()` (planted data only); `key` is a stable per-instance identifier within the dataset.
"""

import csv
from pathlib import Path

import pandas as pd

from attnexp.datasets.babi_format import parse_babi

HF_TO_SORTED_SNLI = {0: "entailment", 1: "neutral", 2: "contradiction"}


def _rationale_lists(column: pd.Series) -> pd.Series:
    return column.fillna("").astype(str).map(lambda s: [int(x) for x in s.split()])


def read_jw_csv(path: Path) -> pd.DataFrame:
    """J&W's processed CSV (`text,label,exp_split`), optionally with a planted `rationale` column."""
    frame = pd.read_csv(path, keep_default_na=False)
    missing = {"text", "label", "exp_split"} - set(frame.columns)
    if missing:
        raise ValueError(f"{path}: missing column(s) {sorted(missing)}; expected text,label,exp_split")
    out = pd.DataFrame({"split": frame["exp_split"], "text": frame["text"].astype(str), "label": frame["label"].astype(int)})
    if "rationale" in frame:
        out["rationale"] = _rationale_lists(frame["rationale"])
    out["key"] = [f"{s}-{i}" for i, s in enumerate(out["split"])]
    return out


def read_snli_tsv(paths: dict[str, Path], lowercase: bool = False) -> pd.DataFrame:
    """SNLI in the TSV layout (`premise, hypothesis, label` with HF ids), one file per split."""
    frames = []
    for split, path in paths.items():
        frame = pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, keep_default_na=False, dtype={"label": int})
        part = pd.DataFrame(
            {
                "split": split,
                "text": frame["premise"].astype(str),
                "question": frame["hypothesis"].astype(str),
                "label": frame["label"].map(HF_TO_SORTED_SNLI),
            }
        )
        if "rationale" in frame:
            part["rationale"] = _rationale_lists(frame["rationale"])
        part["key"] = [f"{split}-{i}" for i in range(len(part))]
        frames.append(part)
    out = pd.concat(frames, ignore_index=True)
    if out["label"].isna().any():
        raise ValueError("SNLI label outside the HF ids 0 (entailment), 1 (neutral), 2 (contradiction)")
    return out


def read_babi_files(paths: dict[str, Path]) -> pd.DataFrame:
    """bAbI questions as passage (statements joined by ' . '), question and one-word answer."""
    frames = []
    for split, path in paths.items():
        questions = parse_babi(path)
        frames.append(
            pd.DataFrame(
                {
                    "split": split,
                    "text": [q.passage for q in questions],
                    "question": [q.question for q in questions],
                    "label": [q.answer for q in questions],
                    "key": [f"{split}-{i}" for i in range(len(questions))],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
