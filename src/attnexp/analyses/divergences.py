"""Distances between distributions over the last dimension (J&W §6.5, W&P §6), batched.

Positions where both inputs are 0 (PAD, [SOS], [EOS]) contribute nothing.
"""

import math

import torch

LN2 = math.log(2.0)
EPS = 1e-10  # floor inside the logs (the authors' 1e-10)


def kl_divergence(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """KL(p || q) = sum_t p_t (log p_t - log q_t); terms with p_t = 0 are 0, q clamped at 1e-10."""
    return torch.where(p > 0, p * (torch.log(p.clamp_min(EPS)) - torch.log(q.clamp_min(EPS))), 0.0).sum(-1)


def jsd(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Jensen-Shannon divergence with natural log (max ln 2), inputs clamped to [0, 1], 1e-10 in the logs."""
    p, q = p.clamp(0.0, 1.0), q.clamp(0.0, 1.0)
    m = 0.5 * (p + q)
    kl_pm = (p * (torch.log(p + EPS) - torch.log(m + EPS))).sum(-1)
    kl_qm = (q * (torch.log(q + EPS) - torch.log(m + EPS))).sum(-1)
    return 0.5 * (kl_pm + kl_qm)


def tvd(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Total variation distance 1/2 sum |p - q| (for two classes: |p1 - q1|)."""
    return 0.5 * (p - q).abs().sum(-1)
