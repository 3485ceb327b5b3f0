"""Attention over real tokens (J&W §4): additive `tanh`, scaled `dot` and the fixed `uniform` baseline.

Scores at [SOS], [EOS] and PAD are set to -inf before the softmax, so those weights are exactly 0.
The QA/NLI variants condition on the question encoding q.
"""

import math

import torch
from torch import nn

from attnexp.models.names import ATTENTIONS


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over positions where `mask` is True; exactly 0 elsewhere."""
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).masked_fill(~mask, 0.0)


def erase(attention: torch.Tensor, erased: torch.Tensor, scores: torch.Tensor | None = None) -> torch.Tensor:
    """alpha' = alpha with the weights at `erased` (broadcastable bool) set to 0, renormalised to sum 1 (all zero when
    nothing is left): Serrano & Smith's erasure of attention weights.

    With `scores` (the attention's pre-softmax scores, broadcastable to `attention`, -inf off the positions it is a
    softmax over) it is the softmax of the scores with `erased` masked too: the same up to float rounding, and still
    defined when every kept weight has underflowed to 0 in float32 (then the renormalised weights are all 0, and the
    decoded output falls to the bias). Without them (a model that keeps only its weights) the weights are renormalised."""
    if scores is not None:
        kept = ~erased & (scores != float("-inf"))
        return masked_softmax(scores, kept)
    kept = attention * ~erased
    return kept / kept.sum(-1, keepdim=True).clamp(min=1e-30)


class AdditiveAttention(nn.Module):
    """s_t = v^T tanh(W h_t + b) (BC) or v^T tanh(W_p h_t + b_p + W_q q + b_q) (QA/NLI)."""

    def __init__(self, hidden_size: int, conditioned: bool = False):
        super().__init__()
        self.hidden_projection = nn.Linear(hidden_size, hidden_size // 2)
        self.question_projection = nn.Linear(hidden_size, hidden_size // 2) if conditioned else None
        self.v = nn.Linear(hidden_size // 2, 1, bias=False)

    def forward(self, hidden: torch.Tensor, question: torch.Tensor | None = None) -> torch.Tensor:
        projected = self.hidden_projection(hidden)
        if self.question_projection is not None:
            projected = projected + self.question_projection(question)[:, None, :]
        return self.v(torch.tanh(projected)).squeeze(-1)


class ScaledDotAttention(nn.Module):
    """s_t = w^T h_t / sqrt(H) with a learned vector w (BC), or h_t^T q / sqrt(H) (QA/NLI)."""

    def __init__(self, hidden_size: int, conditioned: bool = False):
        super().__init__()
        self.scale = math.sqrt(hidden_size)
        self.w = None if conditioned else nn.Linear(hidden_size, 1, bias=False)

    def forward(self, hidden: torch.Tensor, question: torch.Tensor | None = None) -> torch.Tensor:
        if self.w is None:
            return torch.einsum("blh,bh->bl", hidden, question) / self.scale
        return self.w(hidden).squeeze(-1) / self.scale


class UniformAttention(nn.Module):
    """Constant scores: after the masked softmax every real token gets 1/n. No parameters."""

    def forward(self, hidden: torch.Tensor, question: torch.Tensor | None = None) -> torch.Tensor:
        return hidden.new_zeros(hidden.shape[:2])


def build_attention(name: str, hidden_size: int, conditioned: bool) -> nn.Module:
    if name == "tanh":
        return AdditiveAttention(hidden_size, conditioned)
    if name == "dot":
        return ScaledDotAttention(hidden_size, conditioned)
    if name == "uniform":
        return UniformAttention()
    raise ValueError(f"unknown attention {name!r}; choose one of {ATTENTIONS}")
