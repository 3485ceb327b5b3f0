"""The attention function every Hugging Face model of the family runs: transformers' eager maths, registered as an
`AttentionInterface` implementation, per query head (grouped-query heads repeated), which can replace the rows at the
explained positions and notes the attention modules in call order (the recorder `HFClassifier.encode` reads)."""

import torch
from torch import nn

ATTENTION_IMPLEMENTATION = "attnexp_eager"


def _attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """Eager scaled dot-product attention, per query head: grouped-query attention (fewer key/value heads) repeats
    each key/value head for its query heads first, as the models' own eager attention does. A module with
    `_attnexp_cls_rows` [B, H, L] set gets them as its rows at the explained positions `_attnexp_query` [B] ([CLS]:
    0; a decoder: its last token); with `_attnexp_output` [B, 1, H, D] set too, the query is the explained position
    alone and that is its output (the rows over the values `encode` kept). With `_attnexp_hold_query` [B] set, the
    rows at those positions keep their values but no gradient (the gradient importance's attention held fixed).
    The recorder notes the modules in call order (and keeps the last call's values)."""
    given = getattr(module, "_attnexp_output", None)
    if given is not None:  # a decode of the explained position alone: its output, the given rows over kept values
        return given, module._attnexp_cls_rows[:, :, None, :]
    groups = query.shape[1] // key.shape[1]
    if groups > 1:
        key, value = key.repeat_interleave(groups, dim=1), value.repeat_interleave(groups, dim=1)
    if _RECORDER.get("seen") is not None:
        _RECORDER["value"] = value  # after the pass: the last layer's values [B, H, L, D], per query head
    scaling = query.size(-1) ** -0.5 if scaling is None else scaling
    weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        if attention_mask.dtype == torch.bool:
            weights = weights.masked_fill(~attention_mask, torch.finfo(weights.dtype).min)
        else:
            weights = weights + attention_mask[..., : key.shape[-2]]
    weights = torch.softmax(weights, dim=-1)
    rows = getattr(module, "_attnexp_cls_rows", None)
    if rows is not None:
        at = module._attnexp_query[:, None, None, None].expand(-1, weights.shape[1], 1, weights.shape[-1])
        weights = weights.scatter(2, at, rows[:, :, None, :].to(weights.dtype))
    held = getattr(module, "_attnexp_hold_query", None)
    if held is not None:  # the rows at the positions `held` [B] held fixed: their own values, detached
        at = held[:, None, None, None].expand(-1, weights.shape[1], 1, weights.shape[-1])
        weights = weights.scatter(2, at, weights.gather(2, at).detach())
    seen = _RECORDER.get("seen")
    if seen is not None:
        seen.append(module)
    weights_out = weights
    weights = nn.functional.dropout(weights, p=dropout, training=module.training)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights_out


_RECORDER: dict = {}


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(ATTENTION_IMPLEMENTATION, _attention)
    AttentionMaskInterface.register(ATTENTION_IMPLEMENTATION, eager_mask)
