"""Batches of preprocessed instances, padded, with the masks every model and analysis relies on."""

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import torch

from attnexp.data.vocab import PAD


@dataclass
class Batch:
    """A padded batch. Position 0 is [SOS], position length-1 is [EOS]; real tokens lie between."""

    tokens: torch.Tensor  # [B, L] long
    lengths: torch.Tensor  # [B] long, including [SOS] and [EOS]
    labels: torch.Tensor  # [B] long class index
    instance_ids: list[str]
    question: torch.Tensor | None = None  # [B, Lq] long
    question_lengths: torch.Tensor | None = None  # [B]
    candidates: torch.Tensor | None = None  # [B, C] bool, allowed answers (QA); None: all

    @property
    def size(self) -> int:
        return self.tokens.shape[0]

    @property
    def padding_mask(self) -> torch.Tensor:
        """True at non-PAD positions ([SOS] and [EOS] included)."""
        positions = torch.arange(self.tokens.shape[1], device=self.tokens.device)
        return positions[None, :] < self.lengths[:, None]

    @property
    def real_mask(self) -> torch.Tensor:
        """True at real tokens: positions 1 .. length-2."""
        positions = torch.arange(self.tokens.shape[1], device=self.tokens.device)
        return (positions[None, :] >= 1) & (positions[None, :] < self.lengths[:, None] - 1)

    def apply(self, fn) -> "Batch":
        """The same batch with `fn` applied to every tensor field (instance ids unchanged)."""
        keep = lambda t: None if t is None else fn(t)  # noqa: E731
        return replace(
            self,
            tokens=keep(self.tokens),
            lengths=keep(self.lengths),
            labels=keep(self.labels),
            question=keep(self.question),
            question_lengths=keep(self.question_lengths),
            candidates=keep(self.candidates),
        )

    def select(self, rows: slice | torch.Tensor) -> "Batch":
        """The instances at `rows` (a slice or an index tensor; repeats allowed), in that order."""
        indices = range(self.size)[rows] if isinstance(rows, slice) else rows.tolist()
        return replace(self.apply(lambda t: t[rows]), instance_ids=[self.instance_ids[i] for i in indices])

    def to(self, device: torch.device | str) -> "Batch":
        return self.apply(lambda t: t.to(device))


def padded_rows(vectors, width: int | None = None, fill: float = 0.0) -> np.ndarray:
    """Ragged per-row float vectors as one [N, width] array (width: the longest row's by default), `fill` past each
    row's end: the NumPy form of `pad_sequences`, for per-instance scores kept in table columns."""
    width = max((len(v) for v in vectors), default=0) if width is None else width
    out = np.full((len(vectors), width), fill)
    for row, values in enumerate(vectors):
        out[row, : len(values)] = values
    return out


def pad_sequences(sequences: list, pad: int = PAD, min_length: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(s) for s in sequences], dtype=torch.long)
    out = torch.full((len(sequences), max(int(lengths.max()), min_length)), pad, dtype=torch.long)
    for i, seq in enumerate(sequences):
        out[i, : len(seq)] = torch.from_numpy(np.array(seq, dtype=np.int64))  # a copy: parquet arrays are read-only
    return out, lengths


def collate(rows: pd.DataFrame, extra_padding: int = 0) -> Batch:
    """Turn rows of `instances.parquet` into a Batch (extra_padding: pad further, for invariance tests)."""
    tokens, lengths = pad_sequences(list(rows["tokens"]))
    if extra_padding:
        tokens = torch.nn.functional.pad(tokens, (0, extra_padding), value=PAD)
    question = question_lengths = None
    if "question" in rows and rows["question"].notna().all():
        question, question_lengths = pad_sequences(list(rows["question"]))
    candidates = torch.as_tensor(np.stack(rows["candidates"].to_list()), dtype=torch.bool) if "candidates" in rows else None
    return Batch(
        tokens=tokens,
        lengths=lengths,
        labels=torch.tensor(rows["label"].to_numpy(dtype=np.int64)),
        instance_ids=list(rows["instance_id"]),
        question=question,
        question_lengths=question_lengths,
        candidates=candidates,
    )


class TensorRows:
    """Rows of `instances.parquet` turned into tensors once, so that any batch of them is collated by indexing
    and one padding call instead of per-batch DataFrame work (training draws new batches every epoch).
    `batch(index)` equals `collate(rows.iloc[index])` exactly."""

    def __init__(self, rows: pd.DataFrame):
        self.tokens = [torch.from_numpy(np.array(t, dtype=np.int64)) for t in rows["tokens"]]
        self.lengths = torch.tensor([len(t) for t in self.tokens], dtype=torch.long)
        self.labels = torch.tensor(rows["label"].to_numpy(dtype=np.int64))
        self.instance_ids = list(rows["instance_id"])
        self.question = None
        if "question" in rows and rows["question"].notna().all():
            self.question = [torch.from_numpy(np.array(q, dtype=np.int64)) for q in rows["question"]]
            self.question_lengths = torch.tensor([len(q) for q in self.question], dtype=torch.long)
        self.candidates = (
            torch.as_tensor(np.stack(rows["candidates"].to_list()), dtype=torch.bool) if "candidates" in rows else None
        )

    def __len__(self) -> int:
        return len(self.tokens)

    def batch(self, index: np.ndarray) -> Batch:
        """The Batch of the rows at positions `index`, in that order."""
        index = np.asarray(index)
        rows = torch.from_numpy(index.astype(np.int64, copy=False))
        pad = lambda seqs: torch.nn.utils.rnn.pad_sequence([seqs[i] for i in index], batch_first=True, padding_value=PAD)  # noqa: E731
        return Batch(
            tokens=pad(self.tokens),
            lengths=self.lengths[rows],
            labels=self.labels[rows],
            instance_ids=[self.instance_ids[i] for i in index],
            question=None if self.question is None else pad(self.question),
            question_lengths=None if self.question is None else self.question_lengths[rows],
            candidates=None if self.candidates is None else self.candidates[rows],
        )


def length_noise_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """J&W's training order: sort by length + integer noise in [floor(-0.1 l), ceil(0.1 l)), cut, shuffle batches.

    `lengths` are the sequence lengths L = n + 2 ([SOS] and [EOS] included), as the spec and the authors' code."""
    lengths = np.asarray(lengths)
    low = np.floor(-0.1 * lengths).astype(int)
    high = np.maximum(np.ceil(0.1 * lengths).astype(int), low + 1)
    noisy = lengths + rng.integers(low, high)
    order = np.argsort(noisy, kind="stable")
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    rng.shuffle(batches)
    return batches


def length_order(rows: pd.DataFrame) -> np.ndarray:
    """The rows' positions shortest first (a stable sort): consecutive batches of them carry little padding (a
    train split is not length-sorted; batches in its own order pad to their longest row)."""
    lengths = rows["length"] if "length" in rows else rows["tokens"].map(len)
    return np.argsort(lengths.to_numpy(), kind="stable")


def length_sorted(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows shortest first (`length_order`)."""
    return rows.iloc[length_order(rows)]


def sequential_batches(rows: pd.DataFrame, batch_size: int) -> list[Batch]:
    """Batches in the frame's own order (dev/test are length-sorted by preprocessing)."""
    return [collate(rows.iloc[i : i + batch_size]) for i in range(0, len(rows), batch_size)]
