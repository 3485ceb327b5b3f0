"""ERASER (DeYoung et al., 2020): delete the top ceil(k n) real tokens of a ranking (comprehensiveness) or keep only
them (sufficiency), and re-run the model on what is left.

Like leave-one-out, a deletion shortens the sequence: the kept positions move to the front in their order, the
special tokens ([SOS]/[CLS], [EOS]/[SEP]) and the question/hypothesis always stay. Every variant of a batch (instance
x ranking x bin x test) is one padded batch, identical variants run once, in chunks of similar lengths (sufficiency
keeps few tokens: padding them to the comprehensiveness variants' width would double the cost) within the memory
budget.
"""

import math
from collections.abc import Sequence
from dataclasses import replace

import torch

from attnexp.analyses.erasure.rankings import ranks
from attnexp.analyses.jw.importance import length_chunks, rows_per_chunk
from attnexp.data.batching import Batch
from attnexp.models.interface import AttentionModel, PrefixScorer


def top_counts(n: torch.Tensor, bins: Sequence[float]) -> torch.Tensor:
    """ceil(k n) per instance and bin [B, K], at least 1 and at most n (k n rounded to 1e-9 first, so that 0.1 x 30
    is 3, not 4)."""
    counts = [[min(max(math.ceil(round(k * int(m), 9)), 1), int(m)) for k in bins] for m in n.tolist()]
    return torch.tensor(counts, dtype=torch.long, device=n.device).reshape(len(counts), len(bins))


def kept_batch(batch: Batch, instance: torch.Tensor, keep: torch.Tensor) -> Batch:
    """The instances `instance` [V] with only the positions `keep` [V, L] (bool, PAD positions False), in order."""
    rows = batch.select(instance)
    order = torch.sort((~keep).to(torch.int8), dim=-1, stable=True).indices  # kept positions first, in order
    lengths = keep.sum(-1)
    tokens = rows.tokens.gather(1, order)[:, : int(lengths.max())]
    columns = torch.arange(tokens.shape[1], device=tokens.device)
    return replace(rows, tokens=tokens.masked_fill(columns[None, :] >= lengths[:, None], 0), lengths=lengths)


@torch.no_grad()
def comprehensiveness_sufficiency(
    model: AttentionModel, batch: Batch, scores: torch.Tensor, bins: Sequence[float], memory_budget_mb: float = 256.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """p_c(x) - p_c(x without r_k) and p_c(x) - p_c(r_k alone) [B, R, K] for rankings `scores` [B, R, L] and bins k
    (c: the predicted class on x; BC too, as ERASER); NaN for instances without real tokens."""
    scorer = model.variant_logits(batch, memory_budget_mb)
    logits = scorer.own if isinstance(scorer, PrefixScorer) else model.logits(batch)
    original, predicted = model.distribution(logits), model.predict(logits)
    p_original = original.gather(-1, predicted[:, None]).squeeze(-1)
    real, padding = batch.real_mask, batch.padding_mask
    size, rankings, width = scores.shape
    n = real.sum(-1)
    top = ranks(scores, real[:, None, :])[:, :, None, :] < top_counts(n, bins)[:, None, :, None]  # [B, R, K, L]
    special = (padding & ~real)[:, None, None, :]
    keep = torch.stack([padding[:, None, None, :] & ~top, special | (top & real[:, None, None, :])], dim=3)
    instance = torch.arange(size, device=scores.device)[:, None, None, None].expand(keep.shape[:4])
    flat_keep, flat_instance = keep.reshape(-1, width), instance.reshape(-1)
    unique, inverse = torch.unique(torch.cat([flat_instance[:, None], flat_keep.long()], dim=1), dim=0, return_inverse=True)
    variants = kept_batch(batch, unique[:, 0], unique[:, 1:].bool())
    dropped = ~unique[:, 1:].bool() & padding[unique[:, 0]]
    first = torch.where(dropped.any(-1), dropped.int().argmax(-1), variants.lengths)  # the first deleted position
    # a causal model (`PrefixScorer`) runs each variant from its first deleted position on: chunked by what it runs
    runs = variants.lengths - first if isinstance(scorer, PrefixScorer) else variants.lengths
    probabilities = torch.empty(variants.size, dtype=original.dtype, device=original.device)
    for rows in length_chunks(runs, lambda width: rows_per_chunk(model, max(1, width), memory_budget_mb)):
        part = variants.select(rows)
        part = replace(part, tokens=part.tokens[:, : int(part.lengths.max())])
        target = predicted[unique[rows, 0]]
        logits = scorer(part, unique[rows, 0], first[rows])
        probabilities[rows] = model.distribution(logits).gather(-1, target[:, None]).squeeze(-1)
    p_erased = probabilities[inverse].view(size, rankings, len(bins), 2)
    drop = (p_original[:, None, None, None] - p_erased).double()
    drop = drop.masked_fill((n == 0)[:, None, None, None], float("nan"))
    return drop[..., 0], drop[..., 1]
