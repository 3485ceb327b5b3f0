"""Dataset specifications (J&W §3.3, §5): task, raw files, vocabulary and split rules, training defaults."""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..synthetic import BABI_TASK_FILES
from .readers import read_babi_files, read_jw_csv, read_snli_tsv

TASKS = ("bc", "qa", "nli")


@dataclass(frozen=True)
class DatasetSpec:
    """Everything the pipeline needs to know about one dataset key."""

    name: str
    task: str  # "bc", "qa" or "nli"
    raw_files: tuple[str, ...]  # paths relative to the dataset's raw directory
    read: Callable[[Path], pd.DataFrame]  # raw directory -> tidy frame (see readers.py)
    description: str
    min_df: int = 1
    dev_fraction: float | None = None  # carve dev out of train when the raw data has none
    split_seed: int = 16377
    length_bounds: tuple[int | None, int | None] = (None, None)  # exclusive bounds on real tokens
    epochs: int = 8
    batch_size: int = 32
    embedding_dim: int = 300
    hidden_size: int = 128
    classes: tuple[str, ...] | None = None  # fixed output classes; None: sorted labels of the data
    synthetic: str | None = None  # generator family for the embedded offline data
    comparable: bool = True  # False for substitutes that the papers' numbers do not describe
    extra: dict = field(default_factory=dict)


def _babi_reader(task: int) -> Callable[[Path], pd.DataFrame]:
    stem = BABI_TASK_FILES[task]
    return lambda raw: read_babi_files({s: raw / "en" / f"{stem}_{s}.txt" for s in ("train", "test")})


def _babi_files(task: int) -> tuple[str, ...]:
    return tuple(f"en/{BABI_TASK_FILES[task]}_{s}.txt" for s in ("train", "test"))


DATASETS: dict[str, DatasetSpec] = {}


def register(spec: DatasetSpec) -> DatasetSpec:
    DATASETS[spec.name] = spec
    return spec


register(
    DatasetSpec(
        name="syn_sentiment",
        task="bc",
        raw_files=("data.csv",),
        read=lambda raw: read_jw_csv(raw / "data.csv"),
        description="planted-rationale binary classification (generated)",
        epochs=6,
        embedding_dim=64,
        hidden_size=64,
        synthetic="sentiment",
        comparable=False,
    )
)
register(
    DatasetSpec(
        name="syn_nli",
        task="nli",
        raw_files=tuple(f"snli_1.0_{s}.tsv" for s in ("train", "dev", "test")),
        read=lambda raw: read_snli_tsv({s: raw / f"snli_1.0_{s}.tsv" for s in ("train", "dev", "test")}),
        description="planted-rationale sentence pairs, 3 classes (generated)",
        epochs=12,
        batch_size=32,
        embedding_dim=64,
        hidden_size=64,
        classes=("contradiction", "entailment", "neutral"),
        synthetic="nli",
        comparable=False,
    )
)
for _task in (1, 2, 3):
    register(
        DatasetSpec(
            name=f"syn_babi{_task}",
            task="qa",
            raw_files=_babi_files(_task),
            read=_babi_reader(_task),
            description=f"bAbI task {_task} world simulation (generated)",
            dev_fraction=0.15,
            epochs=12,
            batch_size=50,
            embedding_dim=50,
            hidden_size=64,
            synthetic="babi",
            comparable=False,
        )
    )


def get_dataset(name: str) -> DatasetSpec:
    try:
        return DATASETS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known datasets: {', '.join(sorted(DATASETS))}") from None
