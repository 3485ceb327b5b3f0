"""What a per-model figure reads: the analyses' Parquet tables plus the dataset's classes (and tokens for examples)."""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from attnexp.io import read_json, read_parquet
from attnexp.report.style import MAX_ATTENTION_BINS, MAX_ATTENTION_LABELS, FigureStyle, hue_labels


@dataclass(frozen=True)
class FigureOptions(FigureStyle):
    """The house style plus J&W's own figure keys of the config section `figures` (defaults in the schema)."""

    examples: int  # adversarial examples drawn as text heatmaps per model
    example_max_tokens: int  # prefer examples no longer than this


@dataclass
class ModelResults:
    """One trained model's test-set analyses, as written by the analyses stage (docs/jain-wallace.md, the analyses table)."""

    dataset: str
    encoder: str
    attention: str
    seed: int
    task: str
    classes: list[str]
    vocab: list[str] = field(default_factory=list)
    importance: pd.DataFrame | None = None
    kendall: pd.DataFrame | None = None
    permutation: pd.DataFrame | None = None
    adversary: pd.DataFrame | None = None
    instances: pd.DataFrame | None = None  # test split: instance_id, tokens (with SOS/EOS)[, question]

    @property
    def title(self) -> str:
        return f"{self.dataset}, {self.encoder}-{self.attention}, seed {self.seed}"

    def hue(self, frame: pd.DataFrame) -> list[str]:
        return hue_labels(frame["predicted"].to_numpy(), self.classes)

    def require(self, name: str) -> pd.DataFrame:
        """The analysis table `name` ("importance", "kendall", "permutation", "adversary") a figure draws from;
        ValueError naming the model where it was not loaded."""
        frame = getattr(self, name)
        if frame is None:
            raise ValueError(f"this figure needs the {name} table of {self.title}")
        return frame

    def words(self, instance_id) -> list[str]:
        """The real tokens of a test instance as words (SOS/EOS dropped)."""
        if self.instances is None:
            raise ValueError("token text needs the preprocessed instances; pass instances_path to load_model_results")
        row = self.instances.loc[self.instances["instance_id"] == instance_id]
        if row.empty:
            raise KeyError(f"instance {instance_id!r} is not in the preprocessed test split")
        return self._as_words(row.iloc[0]["tokens"])

    def question_words(self, instance_id) -> list[str]:
        """The question (QA) or hypothesis (NLI) of a test instance as words; [] where the task has none."""
        if self.instances is None or "question" not in self.instances.columns:
            return []
        row = self.instances.loc[self.instances["instance_id"] == instance_id]
        question = row.iloc[0]["question"] if len(row) else None
        return self._as_words(question) if question is not None and len(question) else []

    def _as_words(self, ids) -> list[str]:
        return [self.vocab[int(i)] if int(i) < len(self.vocab) else "<UNK>" for i in list(ids)[1:-1]]


def max_attention_bin(max_attention) -> pd.Categorical:
    """The spec's max-attention bins [0,.25), [.25,.5), [.5,.75), [.75,1] as ordered categories."""
    return pd.cut(np.asarray(max_attention, dtype=float), bins=MAX_ATTENTION_BINS, right=False, labels=MAX_ATTENTION_LABELS)


def load_model_results(
    dataset: str,
    encoder: str,
    attention: str,
    seed: int,
    meta_path: str | Path,
    importance_path: str | Path | None = None,
    kendall_path: str | Path | None = None,
    permutation_path: str | Path | None = None,
    adversary_path: str | Path | None = None,
    instances_path: str | Path | None = None,
) -> ModelResults:
    """Read only the tables a figure needs (each path may be None)."""
    meta = read_json(meta_path)
    instances = None
    if instances_path is not None:
        columns = ["instance_id", "split", "tokens", "question"]  # question: QA's question, NLI's hypothesis
        present = set(pq.read_schema(instances_path).names)
        instances = read_parquet(instances_path, columns=[c for c in columns if c in present])
        instances = instances[instances["split"] == "test"].reset_index(drop=True)
    return ModelResults(
        dataset=dataset,
        encoder=encoder,
        attention=attention,
        seed=int(seed),
        task=meta["task"],
        classes=[str(c) for c in meta["classes"]],
        vocab=list(meta.get("vocab", [])),
        importance=read_parquet(importance_path, columns=["instance_id", "attention"]) if importance_path else None,
        kendall=read_parquet(kendall_path) if kendall_path else None,
        permutation=read_parquet(permutation_path) if permutation_path else None,
        adversary=read_parquet(adversary_path) if adversary_path else None,
        instances=instances,
    )
