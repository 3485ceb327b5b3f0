"""Token importance for A&Z §4: blank-out and input gradients of the gold-class score, batched.

Positions are all positions of the batch ([CLS] = position 0); padding gets 0. The Transformer masks out
the closing marker, so its blank-out and gradients are 0 and the A&Z analysis drops it. s(x) is the
predicted probability of the gold class (DEFAULT) or, as the authors' SST script does (quirk
`logit_label`), the logit of the last class.
"""

from dataclasses import replace

import torch

from attnexp.analyses.jw.importance import length_chunks, rows_per_chunk
from attnexp.data.batching import Batch
from attnexp.data.vocab import UNK
from attnexp.models.interface import AttentionModel, PrefixScorer

SCORES = ("prob_gold", "logit_label")


def gold_score(model: AttentionModel, logits: torch.Tensor, labels: torch.Tensor, score: str = "prob_gold") -> torch.Tensor:
    """s(x) per example [B] from logits ([B] for BC, [B, C] otherwise)."""
    if score == "prob_gold":
        return model.distribution(logits).gather(-1, labels[:, None]).squeeze(-1)
    if score == "logit_label":
        return logits if logits.dim() == 1 else logits[:, -1]
    raise ValueError(f"unknown importance score {score!r}; choose one of {SCORES}")


@torch.no_grad()
def blank_out(
    model: AttentionModel, batch: Batch, score: str = "prob_gold", blank: int = UNK, memory_budget_mb: float = 256.0
) -> torch.Tensor:
    """b_j = |s(x) - s(x with token j replaced by `blank`)| for every position: [B, L], 0 on padding.

    The L variants of every example run batched, in chunks whose attention maps fit `memory_budget_mb`;
    the sequence length never changes. A causal model (`PrefixScorer`) runs the real positions' variants only, each
    from the blanked position on.
    """
    size, width = batch.tokens.shape
    scorer = model.variant_logits(batch, memory_budget_mb)
    base = gold_score(model, scorer.own if isinstance(scorer, PrefixScorer) else model.logits(batch), batch.labels, score)
    if isinstance(scorer, PrefixScorer):  # a causal model: the real positions only (each variant runs from its own on)
        instance, position = batch.padding_mask.nonzero(as_tuple=True)
    else:
        instance = torch.arange(size, device=batch.tokens.device).repeat_interleave(width)
        position = torch.arange(width, device=batch.tokens.device).repeat(size)
    variants = batch.select(instance)
    blanked_at = torch.arange(width, device=batch.tokens.device)[None, :] == position[:, None]
    variants = replace(variants, tokens=variants.tokens.masked_fill(blanked_at, blank))
    if isinstance(scorer, PrefixScorer):  # chunks of like run lengths (bounded padding)
        runs = batch.lengths[instance] - position
        chunks = length_chunks(runs, lambda run: rows_per_chunk(model, max(1, run), memory_budget_mb))
    else:  # chunks whose attention maps fit the budget
        config = model.config
        widths = max(16, getattr(model, "forward_widths", 16))  # a Hugging Face layer's transient states: 32 widths
        per_row = 4 * width * (width * config.n_layers * config.n_heads + widths * config.width)
        chunk = max(1, int(memory_budget_mb * 2**20 // per_row))
        chunks = [slice(start, start + chunk) for start in range(0, len(instance), chunk)]
    blanked = torch.zeros(size, width, dtype=base.dtype, device=base.device)
    for rows in chunks:
        part, labels = variants.select(rows), batch.labels[instance[rows]]
        blanked[instance[rows], position[rows]] = gold_score(model, scorer(part, instance[rows], position[rows]), labels, score)
    return ((base[:, None] - blanked).abs() * batch.padding_mask).detach()


def input_gradients(
    model: AttentionModel, batch: Batch, score: str = "prob_gold", memory_budget_mb: float | None = None
) -> dict[str, torch.Tensor]:
    """The input-gradient measures per position [B, L] (`_one_pass`), over instances in chunks whose backward pass fits
    `memory_budget_mb` (each instance's gradient is its own); a batch that fits, or no budget, runs in one pass."""
    rows = batch.size if memory_budget_mb is None else rows_per_chunk(model, batch.tokens.shape[1], memory_budget_mb, True)
    if rows >= batch.size:
        return _one_pass(model, batch, score)
    parts = [_one_pass(model, batch.select(slice(start, start + rows)), score) for start in range(0, batch.size, rows)]
    return {name: torch.cat([part[name] for part in parts]) for name in parts[0]}


def _one_pass(model: AttentionModel, batch: Batch, score: str) -> dict[str, torch.Tensor]:
    """The input-gradient measures per position [B, L] (0 on padding), e_j = the model's `embed` output (token +
    position embedding; a Hugging Face model's embedding-module output):
      - `grad` = |Σ_d ∂s/∂e_jd|, left out for a model whose output ignores a shift of e_j by c·1
        (`input_shift_invariant`: the pre-LN Transformer), where it is 0 up to rounding;
      - `grad_x_input` = |Σ_d e_jd ∂s/∂e_jd|;
      - `grad_l2` = ||∂s/∂e_j||_2.
    """
    embedded = model.embed(batch.tokens).detach().requires_grad_(True)
    # our Transformer: its own [CLS] path (the standard one cannot decode); the J&W classifier and the Hugging Face
    # wrapper: the head's default, `decode` of their own attention over `encode(batch, embedded)`
    logits = model.logits(batch, embedded)
    (grad,) = torch.autograd.grad(gold_score(model, logits, batch.labels, score).sum(), embedded)
    mask = batch.padding_mask
    measures = {
        "grad": grad.sum(-1).abs(),
        "grad_x_input": (grad * embedded).sum(-1).abs(),
        "grad_l2": grad.norm(dim=-1),
    }
    if model.input_shift_invariant:
        del measures["grad"]
    return {name: (values * mask).detach() for name, values in measures.items()}
