"""Attention permutation (J&W §6.4): shuffle the weights over the real tokens, hidden states fixed.

All permutations of all instances are decoded as one [B, P, L] attention tensor (chunked over P to
a memory budget), so the cost is one encoder pass plus P cheap decoder passes.
"""

import torch

from attnexp.analyses.divergences import tvd
from attnexp.data.batching import Batch
from attnexp.models.interface import AttentionModel


def sample_permutations(batch: Batch, n_permutations: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Index tensor [B, P, L]: an independent uniform permutation of the real positions per instance and draw.

    Entry [b, p, t] is the position whose weight moves to t; non-real positions map to themselves.
    """
    real = batch.real_mask
    size, width = real.shape
    keys = torch.rand(size, n_permutations, width, generator=generator).to(real.device)  # CPU draws on any device
    keys = keys.masked_fill(~real[:, None, :], float("inf"))
    order = keys.argsort(dim=-1)  # the first n_b entries are the real positions, shuffled
    shifted = torch.cat([order.new_zeros(size, n_permutations, 1), order[..., :-1]], dim=-1)
    identity = torch.arange(width, device=real.device).expand(size, n_permutations, width)
    return torch.where(real[:, None, :], shifted, identity)


def identity_permutations(batch: Batch, n_permutations: int = 1) -> torch.Tensor:
    width = batch.tokens.shape[1]
    return torch.arange(width, device=batch.tokens.device).expand(batch.size, n_permutations, width).clone()


@torch.no_grad()
def permutation_output_changes(
    model: AttentionModel, batch: Batch, permutations: torch.Tensor, memory_budget_mb: float = 256.0
) -> torch.Tensor:
    """Output change (TVD; BC |dp|) [B, P] when the attention is permuted by `permutations` [B, P, L].

    The model's `decode_permuted` decodes each chunk: by default the attention vector permuted; the Hugging
    Face wrapper permutes each of its heads' attention instead."""
    output = model(batch)
    original = model.distribution(output.logits)[:, None, :]
    size, n_permutations, width = permutations.shape
    per_permutation = 4 * size * width * (model.feature_size + 4)
    chunk = max(1, int(memory_budget_mb * 2**20 // per_permutation))
    changes = []
    for start in range(0, n_permutations, chunk):
        logits = model.decode_permuted(output.encoded, permutations[:, start : start + chunk], batch, output.attention)
        changes.append(tvd(model.distribution(logits), original))
    return torch.cat(changes, dim=1)
