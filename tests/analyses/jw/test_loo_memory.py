"""Issue 37 §4 probe 2: leave-one-out keeps to `analyses.memory_budget_mb` on long documents.

Every allocation torch makes during the call is counted (a dispatch mode sees each op's outputs): the most memory
alive at once must stay within the budget plus the document's own forward pass, and the bytes allocated over the
call must grow linearly with the length. Before, the chunks counted rows, at least one: a long document's deletions
ran one row at a time, each a copy of the whole document, so a 100k-token document allocated length² bytes over the
call and glibc's heap grew to gigabytes on them (the analyze job peaked at 7,462 MiB against a budget of 256)."""

import weakref

import numpy as np
import pandas as pd
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from attnexp.analyses.jw.importance import leave_one_out
from attnexp.data.batching import collate
from attnexp.models.classifier import AttentionClassifier
from tests.factories import tiny_model_config
from tests.models.test_deletions import rerun_leave_one_out

torch.set_num_threads(1)


class Allocations(TorchDispatchMode):
    """Counts the storages torch allocates inside the mode: `total` bytes, and `peak` bytes alive at once (a storage
    is alive while a tensor made inside the mode still views it)."""

    def __init__(self):
        super().__init__()
        self.total = self.peak = self.alive = 0
        self.views: dict[int, list[int]] = {}  # storage address -> [bytes, live tensors]

    def _release(self, address: int) -> None:
        entry = self.views[address]
        entry[1] -= 1
        if entry[1] == 0:
            self.alive -= entry[0]
            del self.views[address]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        given = {t.untyped_storage().data_ptr() for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        for tensor in tree_leaves(out):
            if not isinstance(tensor, torch.Tensor):
                continue
            storage = tensor.untyped_storage()
            address, size = storage.data_ptr(), storage.nbytes()
            if address in self.views:
                self.views[address][1] += 1
            elif address in given or size == 0:
                continue
            else:
                self.views[address] = [size, 1]
                self.total += size
                self.alive += size
                self.peak = max(self.peak, self.alive)
            weakref.finalize(tensor, self._release, address)
        return out


def _model(encoder: str, task: str = "bc") -> AttentionClassifier:
    torch.manual_seed(0)
    return AttentionClassifier(tiny_model_config(task, encoder, "tanh")).eval()


def _document(n: int, task: str = "bc", seed: int = 0):
    rng = np.random.default_rng(seed)
    rows = {"instance_id": ["long"], "tokens": [[2, *rng.integers(4, 30, n).tolist(), 3]], "label": [1]}
    if task == "qa":
        rows |= {"question": [[2, 5, 6, 3]], "candidates": [np.array([True, False, True, True])]}
    return collate(pd.DataFrame(rows))


def _counted(model, batch, budget: float) -> tuple[Allocations, Allocations]:
    """(leave-one-out's allocations, the document's own forward's)."""
    with torch.no_grad(), Allocations() as forward:
        model(batch)
    with Allocations() as loo:
        leave_one_out(model, batch, memory_budget_mb=budget)
    return loo, forward


@pytest.mark.parametrize("encoder", ["average", "cnn"])
def test_leave_one_out_of_a_long_document_allocates_within_the_budget_and_linearly(encoder):
    model, budget = _model(encoder), 0.5  # MiB: a row of 4,000 tokens is 0.03 MiB of ids, 1.6 MiB by rows_per_chunk
    counts = {n: _counted(model, _document(n), budget) for n in (2000, 8000)}
    for n, (loo, forward) in counts.items():
        assert loo.peak <= budget * 2**20 + 3 * forward.peak, (n, loo.peak, forward.peak)
    (short, _), (long, long_forward) = counts[2000], counts[8000]
    # 4x the length: 4x the bytes allocated (16x before: each of the 4x deletions copied a 4x longer row)
    assert long.total <= 6 * short.total, (short.total, long.total)
    assert long.total <= 40 * long_forward.total, (long.total, long_forward.total)


@pytest.mark.parametrize("encoder", ["average", "cnn"])
@pytest.mark.parametrize("task", ["bc", "qa"])
def test_leave_one_out_in_tiny_chunks_equals_one_chunk(encoder, task):
    """Chunking over deletions (and the direct sums' rows) changes no score: a budget of a few deletions at a time
    against one chunk for everything, and against the deletions re-run as one batch."""
    model, batch = _model(encoder, task), _document(300, task, seed=1)
    whole = leave_one_out(model, batch, memory_budget_mb=1e6)
    tiny = leave_one_out(model, batch, memory_budget_mb=1e-3)
    torch.testing.assert_close(tiny, whole, atol=1e-7, rtol=1e-6)
    torch.testing.assert_close(whole, rerun_leave_one_out(model, batch), atol=1e-6, rtol=1e-5)
    assert whole[batch.real_mask].abs().max() > 1e-4


def test_the_direct_sums_run_in_parts_within_the_budget(monkeypatch):
    """Deletions whose kept scores lie far below the instance's highest are summed over the whole width, one row per
    deletion: they run in parts of the budget, with the same scores."""
    import attnexp.models.classifier as classifier

    model, batch, budget = _model("average"), _document(2000), 0.25
    spliced = leave_one_out(model, batch, memory_budget_mb=budget)
    monkeypatch.setattr(classifier, "UNDERFLOW_MARGIN", float("-inf"))  # every deletion summed directly
    loo, forward = _counted(model, batch, budget)
    torch.testing.assert_close(leave_one_out(model, batch, memory_budget_mb=budget), spliced, atol=1e-6, rtol=1e-5)
    assert loo.peak <= budget * 2**20 + 3 * forward.peak, (loo.peak, forward.peak)
