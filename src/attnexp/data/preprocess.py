"""One preprocessed format for every dataset (J&W §3.2-3.4), written once and read by everything downstream.

`instances.parquet`: instance_id, split, tokens ([SOS] ids [EOS]), label (class index), question
(ids, QA/NLI), rationale (planted cue positions in `tokens`), length (real tokens).
`meta.json`: vocabulary, classes, task, split sizes, the rows each step dropped (`dropped`) and the options that
produced them.
"""

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from attnexp.data.vocab import build_vocabulary, encode
from attnexp.datasets import DatasetSpec
from attnexp.datasets.acquire import resolve_files, verify_files
from attnexp.datasets.user import BUILTIN
from attnexp.errors import DataError
from attnexp.io import read_json, read_parquet, write_json, write_parquet

SPLITS = ("train", "dev", "test")
EMPTY, LENGTH = "empty after tokenization", "length filter"  # the keys of meta["dropped"]: why rows were dropped


def carve_split(index: list, fraction: float, seed: int, stratify=None) -> tuple[list, list]:
    """scikit-learn `train_test_split` semantics: ceil(fraction * n) held out, RandomState(seed) shuffle."""
    if not index:
        return [], []
    from sklearn.model_selection import train_test_split  # here: scikit-learn adds ~1.5 s to every job's start

    kept, held = train_test_split(index, test_size=fraction, random_state=seed, shuffle=True, stratify=stratify)
    return list(kept), list(held)


def length_filter(lengths: pd.Series, bounds: tuple[int | None, int | None], implicit_extremes: bool) -> pd.Series:
    """Exclusive bounds on the number of real tokens; the quirk drops the split's own extremes."""
    low, high = bounds
    if implicit_extremes:
        low = lengths.min() if low is None else low
        high = lengths.max() if high is None else high
    keep = pd.Series(True, index=lengths.index)
    if low is not None:
        keep &= lengths > low
    if high is not None:
        keep &= lengths < high
    return keep


def _per_split(splits: pd.Series) -> dict[str, int]:
    return {s: int((splits == s).sum()) for s in SPLITS}


def dropped_summary(meta: Mapping) -> list[str]:
    """One line per preprocessing step that dropped rows (meta["dropped"]), for the job log: how many, why, per split."""
    low, high = meta["options"]["length_bounds"]
    extremes = "; implicit_extremes: also each split's shortest and longest" if meta["options"]["implicit_extremes"] else ""
    why = {
        EMPTY: f"had no token left after the {meta['tokenizer']} tokenizer (empty or punctuation-only text)",
        LENGTH: (
            f"were outside the length filter (keep {low if low is not None else '-inf'} < tokens < "
            f"{high if high is not None else 'inf'}, from length_bounds{extremes})"
        ),
    }
    lines = []
    for step, counts in meta.get("dropped", {}).items():
        if sum(counts.values()):
            per_split = ", ".join(f"{s}: {n}" for s, n in counts.items())
            lines.append(f"{meta['dataset']}: dropped {sum(counts.values())} row(s) that {why.get(step, step)} ({per_split})")
    return lines


def _check_splits_left(spec: DatasetSpec, before: dict[str, int], after: dict[str, int]) -> None:
    """Raise DataError naming the dataset, the split and the setting when a split has no instance left."""
    empty = [s for s in SPLITS if not after[s]]
    if not empty:
        return
    counts = ", ".join(f"{s}: {before[s]} -> {after[s]}" for s in SPLITS)
    if spec.task == "bc" and any(before[s] for s in empty):
        low, high = spec.length_bounds
        user = spec.name not in BUILTIN
        where = f"config key 'user_datasets.{spec.name}.length_bounds'" if user else f"{spec.name}'s length_bounds"
        fix = (
            f"the length filter (keep {low if low is not None else '-inf'} < tokens < {high if high is not None else 'inf'}) "
            f"removed every {', '.join(empty)} instance (rows per split before -> after: {counts}); widen {where}"
        )
    else:
        fix = f"the data has no {', '.join(empty)} instance (rows per split: {counts}); add rows, or check the split column"
    raise DataError(f"dataset {spec.name}: {fix}")


def preprocess(
    spec: DatasetSpec,
    raw_dir: str | Path | None,
    vocab_fit_on: str = "train",
    implicit_extremes: bool = False,
    user_files: dict | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Read the raw files of `spec` found under `raw_dir` (or named in `user_files`) and return (instances, meta)
    in the shared format: `preprocess_files` after `acquire.resolve_files` (a notebook's way; the workflow hands the
    job the files it resolved once)."""
    return preprocess_files(spec, resolve_files(spec, raw_dir, user_files), vocab_fit_on, implicit_extremes, raw_dir)


def preprocess_files(
    spec: DatasetSpec,
    files: Mapping[str, str | Path],
    vocab_fit_on: str,
    implicit_extremes: bool,
    raw_dir: str | Path | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Read the raw `files` of `spec` (role -> path, the roles of its layout) and return (instances, meta).

    Files listed in `raw_dir/SHA256SUMS` (and known official archives' files) are verified first, so a corrupt file
    fails before anything is written.
    """
    files = {role: Path(path) for role, path in files.items()}
    verified = verify_files(files, raw_dir)
    frame = spec.read(files).reset_index(drop=True)
    kept = frame["text"].str.split().str.len() > 0
    dropped = {EMPTY: _per_split(frame.loc[~kept, "split"])}  # in the raw splits: dev may be carved out of train below
    frame = frame[kept].reset_index(drop=True)
    if "dev" not in set(frame["split"]):
        if not spec.dev_fraction:
            raise ValueError(f"{spec.name}: the raw data has no dev split and no dev_fraction is set")
        train_index = frame.index[frame["split"] == "train"].tolist()
        _, dev_index = carve_split(train_index, spec.dev_fraction, spec.split_seed)
        frame.loc[dev_index, "split"] = "dev"
    unknown = set(frame["split"]) - set(SPLITS)
    if unknown:
        raise ValueError(f"{spec.name}: unknown split name(s) {sorted(unknown)}; expected {SPLITS}")

    has_question = "question" in frame
    fit = frame if vocab_fit_on == "all_splits" else frame[frame["split"] == "train"]
    documents = [t.split() for t in fit["text"]]
    if has_question:
        documents += [q.split() for q in fit["question"]]
    vocab = build_vocabulary(documents, spec.min_df)
    if spec.classes:
        classes = list(spec.classes)
    elif spec.derive_classes:
        classes = list(spec.derive_classes(files, frame))
    else:
        classes = sorted({str(v) for v in frame["label"]})
    if spec.vocab_add_labels:
        vocab += [c for c in classes if c not in set(vocab)]
    index = {w: i for i, w in enumerate(vocab)}

    class_index = {c: i for i, c in enumerate(classes)}
    labels = frame["label"].astype(str).map(class_index)
    if labels.isna().any():
        bad = sorted(set(frame["label"].astype(str)) - set(classes))
        raise ValueError(f"{spec.name}: label(s) {bad[:5]} are not among the classes {classes}")

    out = pd.DataFrame(
        {
            "instance_id": [f"{spec.name}/{k}" for k in frame["key"]],
            "split": frame["split"],
            "tokens": [encode(t.split(), index) for t in frame["text"]],
            "label": labels.astype(np.int64),
        }
    )
    out["length"] = out["tokens"].map(len) - 2
    if has_question:
        out["question"] = [encode(q.split(), index) for q in frame["question"]]
    if "candidates" in frame:
        out["candidates"] = frame["candidates"].map(lambda allowed: [c in set(allowed) for c in classes])
    out["rationale"] = (
        frame["rationale"].map(lambda r: [p + 1 for p in r]) if "rationale" in frame else [[] for _ in range(len(out))]
    )

    before_filter = _per_split(out["split"])
    if spec.task == "bc":
        keep = pd.concat(
            [length_filter(part["length"], spec.length_bounds, implicit_extremes) for _, part in out.groupby("split")]
        )
        out = out[keep.reindex(out.index)]
    after_filter = _per_split(out["split"])
    dropped[LENGTH] = {s: before_filter[s] - after_filter[s] for s in SPLITS}
    _check_splits_left(spec, before_filter, after_filter)
    parts = [out[out["split"] == "train"]]
    parts += [out[out["split"] == s].sort_values("length", kind="stable") for s in ("dev", "test")]
    out = pd.concat(parts, ignore_index=True)
    if out["instance_id"].duplicated().any():
        raise ValueError(f"{spec.name}: instance ids are not unique")

    meta = {
        "dataset": spec.name,
        "task": spec.task,
        "classes": classes,
        "vocab": vocab,
        "sizes": {s: int((out["split"] == s).sum()) for s in SPLITS},
        "sizes_before_filter": before_filter,
        "dropped": dropped,
        "class_counts": {s: out.loc[out["split"] == s, "label"].value_counts().sort_index().to_dict() for s in SPLITS},
        "mean_length": float(out["length"].mean()),
        "comparable": spec.comparable,
        "note": spec.note if not spec.comparable else "",
        "raw_files": {role: str(path) for role, path in files.items()},
        "verified_sha256": verified,
        "embeddings": "random",
        "tokenizer": spec.tokenizer,
        "options": {
            "vocab_fit_on": vocab_fit_on,
            "implicit_extremes": implicit_extremes,
            "min_df": spec.min_df,
            "length_bounds": list(spec.length_bounds),
            "split_seed": spec.split_seed,
        },
    }
    return out, meta


def write_preprocessed(instances: pd.DataFrame, meta: dict, instances_path: str | Path, meta_path: str | Path) -> None:
    write_parquet(instances_path, instances)
    write_json(meta_path, meta)


def read_preprocessed(instances: str | Path, meta: str | Path) -> tuple[pd.DataFrame, dict]:
    """The preprocessed dataset from its two files (`attnexp.paths.preprocessed_files`)."""
    return read_parquet(instances), read_json(meta)


def split_frame(instances: pd.DataFrame, split: str) -> pd.DataFrame:
    return instances[instances["split"] == split].reset_index(drop=True)


def positive_class_weight(labels: np.ndarray) -> float:
    """J&W's pos_weight = N / sum(y) - 1 over the (filtered) training labels."""
    positives = float(np.sum(labels))
    return len(labels) / positives - 1.0 if positives else 1.0
