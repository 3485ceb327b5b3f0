"""Serrano & Smith (2019): erase attention weights at the attention layer, the encoder run once.

Erasing a set S sets alpha_t = 0 on S and renormalises the rest (`models.attention.erase`: the softmax of the stored
scores with S masked, defined when the kept weights underflow in float32); the model's
`decode_erased` decodes it over the fixed states (the J&W models: a weighted average of precomputed per-position
outputs; multi-head models erase S from every head's last-layer [CLS] row). The first-flip test erases the items of
a ranking in order, k = 1, 2, ..., n - 1 (one weight always remains): the model's `predict_erased_in_order` decodes
every k of every ranking of a batch (the J&W classifier from sums in rank order; other models one erasure mask
[B, R * K, L] per chunk of k).
"""

import torch

from attnexp.analyses.divergences import jsd, tvd
from attnexp.analyses.erasure.rankings import ranks
from attnexp.data.batching import Batch
from attnexp.models.attention import erase
from attnexp.models.interface import AttentionModel

__all__ = ["erase", "first_flip", "single_weight"]


@torch.no_grad()
def first_flip(
    model: AttentionModel, batch: Batch, scores: torch.Tensor, output=None, memory_budget_mb: float = 256.0
) -> torch.Tensor:
    """Fraction k / n of the real items erased, in the order of each ranking `scores` [B, R, L], when the decision
    first flips [B, R]; NaN when erasing all but one never flips it (and for n < 2)."""
    output = model(batch) if output is None else output
    predicted = model.predict(output.logits)
    real = batch.real_mask
    n = real.sum(-1)
    size, rankings, _ = scores.shape
    steps = max(int(n.max()) - 1, 0)
    if steps == 0:
        return torch.full((size, rankings), float("nan"), dtype=torch.float64, device=scores.device)
    order = ranks(scores, real[:, None, :])  # [B, R, L]
    erased = model.predict_erased_in_order(output.encoded, order, steps, batch, output.attention, memory_budget_mb)
    k = torch.arange(1, steps + 1, device=scores.device)
    flipped = (erased != predicted[:, None, None]) & (k[None, None, :] < n[:, None, None])
    first = torch.where(flipped, k[None, None, :], steps + 1).min(-1).values
    fraction = first.double() / n[:, None].double()
    return fraction.masked_fill(first > steps, float("nan"))


@torch.no_grad()
def single_weight(
    model: AttentionModel, batch: Batch, items: torch.Tensor, output=None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Erase one attention weight per instance and column of `items` [B, M] (positions): JSD(y, y') [B, M], the J&W
    output change TVD(y, y') (BC: |dp|) [B, M] and whether the decision flips [B, M]; NaN, NaN and False for
    instances with fewer than 2 real items."""
    output = model(batch) if output is None else output
    width = batch.tokens.shape[1]
    erased = torch.nn.functional.one_hot(items, width).bool()  # [B, M, L]
    logits = model.decode_erased(output.encoded, erased, batch, output.attention)
    original = model.distribution(output.logits)
    erased_output = model.distribution(logits)
    divergence = jsd(erased_output, original[:, None, :]).double()
    change = tvd(erased_output, original[:, None, :]).double()
    flipped = model.predict(logits) != model.predict(output.logits)[:, None]
    alone = (batch.real_mask.sum(-1) < 2)[:, None]
    return divergence.masked_fill(alone, float("nan")), change.masked_fill(alone, float("nan")), flipped & ~alone
