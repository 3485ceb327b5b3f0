"""Rankings as total orders over the real tokens: scores -> ranks (ties broken by position, earlier first), the seeded
random baseline, the planted rationale as an oracle ranking, and Serrano & Smith's attention-layer gradients."""

from collections.abc import Sequence

import torch

from attnexp.analyses.jw.adversary import instance_generator
from attnexp.data.batching import Batch
from attnexp.models.interface import AttentionModel


def ranks(scores: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """Rank of every position [..., L] under `scores` [..., L] (0: first), higher scores first, ties by position;
    the real positions (`real`, broadcastable) take ranks 0 .. n-1, the others n .. L-1."""
    key = (-scores).masked_fill(~real, float("inf"))
    order = torch.sort(key, dim=-1, stable=True).indices
    positions = torch.arange(scores.shape[-1], device=scores.device).expand_as(order)
    return torch.empty_like(order).scatter_(-1, order, positions)


def scores_from_lists(values: Sequence[Sequence[float]], batch: Batch, offset: int = 1) -> torch.Tensor:
    """Per-instance score lists over the real tokens (`values[i][j]`: position j + `offset`) as [B, L], 0 elsewhere."""
    scores = torch.zeros(batch.tokens.shape, dtype=torch.float64)
    for row, vector in enumerate(values):
        vector = torch.as_tensor(list(vector), dtype=torch.float64)
        scores[row, offset : offset + len(vector)] = vector
    return scores.to(batch.tokens.device) * batch.real_mask


def random_draws(batch: Batch, seed: int, top: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The random baseline of every instance from its own generator (`instance_generator(seed, "erasure/" + id)`: not
    the adversary's stream), so that a draw does not depend on which instances share the batch: scores [B, L]
    (uniform on the real tokens, 0 elsewhere) and Serrano & Smith's random single weight [B] (their `rand_nontop`): a
    real position uniform over the n - 1 real items other than `top` [B] (the top item's position, 1 .. n).

    With fewer than 2 real items there is no other item and the single-weight test is undefined: the position is then
    1 (the only real item, or the first position after [SOS]) as a placeholder, and `attention.single_weight` reports
    NaN (flips: NA in the tables) for such instances, whatever is erased."""
    scores = torch.zeros(batch.tokens.shape, dtype=torch.float64)
    others = torch.zeros(batch.size, dtype=torch.long)  # the draw's index among the real items other than `top`
    for row, (instance_id, length) in enumerate(zip(batch.instance_ids, batch.lengths.tolist(), strict=True)):
        generator = instance_generator(seed, f"erasure/{instance_id}")  # per instance (batch-independent draws)
        n = max(length - 2, 0)
        scores[row, 1 : 1 + n] = torch.rand(n, generator=generator, dtype=torch.float64)
        others[row] = int(torch.randint(max(n - 1, 1), (1,), generator=generator))
    device = batch.tokens.device
    items = 1 + others.to(device)  # 1 .. n - 1 (the real positions are 1 .. n: `Batch.real_mask`)
    items = items + (items >= top).long()  # skip the top item: a bijection onto the positions 1 .. n other than top
    items = torch.where(batch.real_mask.sum(-1) >= 2, items, 1)  # n < 2: no other item, a placeholder (see above)
    return scores.to(device) * batch.real_mask, items


def rationale_scores(rationales: Sequence[Sequence[int]], batch: Batch) -> torch.Tensor:
    """The planted cues as a ranking [B, L]: 1 at each cue (`rationales[i]`: token positions, as the preprocessed
    `rationale` column), 0 elsewhere, so the cues come first in position order, then the other tokens in order."""
    scores = torch.zeros(batch.tokens.shape, dtype=torch.float64)
    for row, cues in enumerate(rationales):
        scores[row, [int(c) for c in cues]] = 1.0
    return scores.to(batch.tokens.device) * batch.real_mask


def attention_gradients(model: AttentionModel, batch: Batch, output=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Serrano & Smith's attention-layer rankings [B, L]: d p_c / d alpha_t (c: the predicted class; the encoded
    states fixed, as J&W's gradient detaches the attention from the encoder) and alpha_t * d p_c / d alpha_t; 0 off
    the real tokens. Signed: the weights whose growth most supports the decision come first."""
    if output is None:
        with torch.no_grad():
            output = model(batch)
    attention = output.attention.detach().clone().requires_grad_(True)
    target = model.predict(output.logits)
    with torch.enable_grad():
        logits = model.decode(output.encoded, attention, batch)
        probability = model.distribution(logits).gather(-1, target[:, None]).squeeze(-1)
        (gradient,) = torch.autograd.grad(probability.sum(), attention)
    gradient = gradient.detach() * batch.real_mask
    return gradient, gradient * output.attention.detach()
