"""Raw attention and attention rollout over input tokens (A&Z §3), batched over examples.

`maps` are per-layer, per-head attention tensors [B, layers, heads, n, n] (rows = queries, each row a
distribution over keys). Padding may follow the real positions of each example: rows of real queries
put no weight on padding, so the relevance of real positions is unaffected by it.
"""

import torch

RELEVANCE_ROWS = ("cls", "max_over_rows")


def head_average(maps: torch.Tensor) -> torch.Tensor:
    """W_l = mean over heads: [B, layers, n, n]."""
    return maps.mean(dim=2)


def residual_augment(weights: torch.Tensor, residual: bool = True) -> torch.Tensor:
    """Â = 0.5 W + 0.5 I with rows renormalised (W itself when `residual` is False, for ablation)."""
    if residual:
        eye = torch.eye(weights.shape[-1], dtype=weights.dtype, device=weights.device)
        weights = 0.5 * weights + 0.5 * eye
    return weights / weights.sum(dim=-1, keepdim=True).clamp(min=1e-12)


def rollout(augmented: torch.Tensor) -> torch.Tensor:
    """R_1 = Â_1, R_l = Â_l R_{l-1}: the rollout matrices of every layer [B, layers, n, n]."""
    products = [augmented[:, 0]]
    for layer in range(1, augmented.shape[1]):
        products.append(augmented[:, layer] @ products[-1])
    return torch.stack(products, dim=1)


def relevance_rows(
    matrices: torch.Tensor, lengths: torch.Tensor, row: str = "cls", query: int | torch.Tensor = 0
) -> torch.Tensor:
    """Relevance over input positions [B, layers, n] read from per-layer matrices [B, layers, n, n].

    `cls` reads the row of position `query` (one for all, or one per example [B]: a decoder's last token);
    `max_over_rows` (quirk of the authors' SST script) takes the element-wise maximum over all real query rows.
    Rows are renormalised to sum 1; padding gets 0.
    """
    n = matrices.shape[-1]
    valid = torch.arange(n, device=matrices.device)[None, :] < lengths[:, None]
    if row == "cls" and torch.is_tensor(query):
        picked = matrices[torch.arange(matrices.shape[0], device=matrices.device), :, query.to(matrices.device)]
    elif row == "cls":
        picked = matrices[:, :, query, :]
    elif row == "max_over_rows":
        picked = matrices.masked_fill(~valid[:, None, :, None], float("-inf")).amax(dim=2)
    else:
        raise ValueError(f"unknown relevance row {row!r}; choose one of {RELEVANCE_ROWS}")
    picked = picked.masked_fill(~valid[:, None, :], 0.0)
    return picked / picked.sum(dim=-1, keepdim=True).clamp(min=1e-12)


def raw_relevance(maps: torch.Tensor, lengths: torch.Tensor, row: str = "cls", query: int | torch.Tensor = 0) -> torch.Tensor:
    """r_raw,l = W_l[q, :] for every layer: [B, layers, n]."""
    return relevance_rows(head_average(maps), lengths, row, query)


def rollout_relevance(
    maps: torch.Tensor, lengths: torch.Tensor, row: str = "cls", query: int | torch.Tensor = 0, residual: bool = True
) -> torch.Tensor:
    """r_roll,l = R_l[q, :] for every layer: [B, layers, n]."""
    return relevance_rows(rollout(residual_augment(head_average(maps), residual)), lengths, row, query)
