"""TensorRows (rows tensorised once for training) gives exactly the batches `collate` builds from the frame."""

import numpy as np
import pandas as pd
import torch

from attnexp.data.batching import TensorRows, collate


def _same(a, b) -> None:
    for field in ("tokens", "lengths", "labels", "question", "question_lengths", "candidates"):
        x, y = getattr(a, field), getattr(b, field)
        assert (x is None) == (y is None), field
        if x is not None:
            assert x.dtype == y.dtype and torch.equal(x, y), field
    assert a.instance_ids == b.instance_ids


def test_tensor_rows_batches_equal_collate():
    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 12, size=20)
    rows = pd.DataFrame(
        {
            "instance_id": [f"i{k}" for k in range(20)],
            "tokens": [rng.integers(1, 50, size=n) for n in lengths],
            "label": rng.integers(0, 3, size=20),
            "question": [rng.integers(1, 50, size=n) for n in rng.integers(3, 6, size=20)],
            "candidates": [rng.random(3) > 0.3 for _ in range(20)],
        }
    )
    tensors = TensorRows(rows)
    for index in (np.array([3, 0, 17, 5]), np.arange(20), np.array([7])):
        _same(tensors.batch(index), collate(rows.iloc[index]))
    plain = rows.drop(columns=["question", "candidates"])
    _same(TensorRows(plain).batch(np.array([2, 9])), collate(plain.iloc[[2, 9]]))
