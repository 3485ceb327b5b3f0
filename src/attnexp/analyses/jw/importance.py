"""Token importance (J&W §6.1-6.2): gradient x input, leave-one-out, and integrated gradients (Captum).

Each function maps (model, batch) to scores [B, L] that are exactly 0 off the real tokens, so every
instance's scores are `scores[i, 1 : length_i + 1]`. All are batched: one backward pass for the
gradient, the deletions of a batch in chunks that fit a memory budget for leave-one-out, and the
integrated-gradients steps in chunks that fit it too. The gradient and integrated gradients run a batch's
instances in groups of like lengths (`by_length`), so that no short instance is padded to the longest.
"""

from collections.abc import Callable
from dataclasses import replace

import torch

from attnexp.analyses.divergences import tvd
from attnexp.data.batching import Batch
from attnexp.models.interface import AttentionModel, PositionScorer, PrefixScorer


def explained_probability(model: AttentionModel, logits: torch.Tensor, target: torch.Tensor | None = None) -> torch.Tensor:
    """The scalar the importances explain: BC p(positive); QA/NLI the probability of `target` (default: predicted)."""
    distribution = model.distribution(logits)
    if model.is_binary:
        return distribution[..., 1]
    target = model.predict(logits) if target is None else target
    return distribution.gather(-1, target[..., None]).squeeze(-1)


def gradient_importance(
    model: AttentionModel, batch: Batch, target: torch.Tensor | None = None, memory_budget_mb: float | None = None
) -> torch.Tensor:
    """|<d y / d e_t, e_t>| with the attention detached, so gradients flow only through the hidden states; y as
    `explained_probability` (`target`: [B] classes, QA/NLI; default the predicted ones). `memory_budget_mb`: the
    instances in chunks whose backward pass fits it (`rows_per_chunk`; each instance's gradient is its own)."""
    rows = batch.size if memory_budget_mb is None else rows_per_chunk(model, batch.tokens.shape[1], memory_budget_mb, True)
    grouped = by_length(batch, rows, lambda part, index: gradient_importance(model, part, _at(target, index)))
    if grouped is not None:
        return grouped
    embedded = model.embed(batch.tokens).detach().requires_grad_(True)
    with torch.enable_grad():
        scalar = explained_probability(model, model.fixed_attention_logits(batch, embedded), target)
        (gradient,) = torch.autograd.grad(scalar.sum(), embedded)
    return ((gradient * embedded).sum(-1).abs() * batch.real_mask).detach()


def deletion_batch(
    batch: Batch, instance: torch.Tensor | None = None, position: torch.Tensor | None = None
) -> tuple[Batch, torch.Tensor, torch.Tensor]:
    """Single-token deletions as one batch: every one of every instance, or those of the given (`instance`,
    `position`) pairs (positions of real tokens).

    Returns the deletions (each row one instance with one real token removed, trimmed to its longest row), and
    for each row the index of its instance and the position it deleted.
    """
    if instance is None or position is None:
        instance, position = batch.real_mask.nonzero(as_tuple=True)
    repeated = batch.select(instance)
    lengths = repeated.lengths - 1
    width = int(lengths.max()) if len(lengths) else 0
    columns = torch.arange(width, device=batch.tokens.device)
    source = columns[None, :] + (columns[None, :] >= position[:, None]).long()
    tokens = repeated.tokens.gather(1, source).masked_fill(columns[None, :] >= lengths[:, None], 0)
    return replace(repeated, tokens=tokens, lengths=lengths), instance, position


SLACK = 0.8  # a chunk's shortest variant is at least this fraction of its longest (bounded padding)


def length_chunks(lengths: torch.Tensor, rows_for_width) -> list[torch.Tensor]:
    """Indices of `lengths` in chunks, longest first: each chunk's lengths within SLACK of its longest, and at most
    `rows_for_width(longest)` rows."""
    order = torch.sort(lengths, descending=True, stable=True).indices
    ordered = lengths[order].tolist()
    chunks, start = [], 0
    while start < len(ordered):
        width, stop = ordered[start], start + 1
        limit = start + rows_for_width(width)
        while stop < min(limit, len(ordered)) and ordered[stop] >= SLACK * width:
            stop += 1
        chunks.append(order[start:stop])
        start = stop
    return chunks


def by_length(batch: Batch, rows: int, score: Callable[[Batch, torch.Tensor], torch.Tensor]) -> torch.Tensor | None:
    """Scores [B, L] from `score(part, index)` run on the batch's instances in groups of like lengths (`length_chunks`:
    at most `rows` instances, within SLACK of the group's longest), each trimmed to its longest, so that a batch of
    short and long instances pads none to the longest; None when the batch is one such group already."""
    groups = length_chunks(batch.lengths, lambda width: rows)
    if len(groups) == 1:
        return None
    scores = None
    for index in groups:
        part = batch.select(index)
        part = replace(part, tokens=part.tokens[:, : int(part.lengths.max())])
        values = score(part, index)
        if scores is None:
            scores = values.new_zeros(batch.tokens.shape)
        scores[index, : part.tokens.shape[1]] = values
    return scores


def _at(target: torch.Tensor | None, index: torch.Tensor) -> torch.Tensor | None:
    return None if target is None else target[index]


def rows_per_chunk(model: AttentionModel, width: int, memory_budget_mb: float, backward: bool = False) -> int:
    """How many sequences of `width` tokens fit the budget (float32 activations: the embedding and the hidden widths
    a token holds, the model's `forward_widths`: 8 for the J&W models, 32 for a Hugging Face Transformer; `backward`:
    those it keeps for a backward pass, `activation_widths`: 8 for one recurrent layer, 16 a layer for a Transformer)."""
    widths = getattr(model, "activation_widths" if backward else "forward_widths", 8)
    per_row = 4 * width * (model.embedding_size + widths * model.feature_size)
    return max(1, int(memory_budget_mb * 2**20 // per_row))


@torch.no_grad()
def leave_one_out(model: AttentionModel, batch: Batch, memory_budget_mb: float = 256.0) -> torch.Tensor:
    """Output change (TVD; BC |dp|) when each real token is deleted and the model re-run on the rest.

    The deletions run in chunks within `memory_budget_mb`. A scorer that needs only (instance, position) (a
    `PositionScorer`: J&W's CNN and Average classifiers) gets chunks of deletions sized by what one deletion costs
    it, and no deletion rows are built; otherwise each chunk is a batch of deletion rows, as many as fit (at least
    one: one deletion of an instance costs what the instance's own forward does). A `PrefixScorer` (a causal model)
    runs each deletion from the deleted position on."""
    scorer = model.deletion_logits(batch)
    original = model.distribution(scorer.own if isinstance(scorer, PrefixScorer) else model(batch).logits)
    instance, position = batch.real_mask.nonzero(as_tuple=True)
    every = lambda chunk: [slice(start, start + chunk) for start in range(0, len(instance), chunk)]  # noqa: E731
    if isinstance(scorer, PositionScorer):
        score = lambda rows, deleted: scorer.logits(rows, deleted, memory_budget_mb)  # noqa: E731
        chunks = every(deletions_per_chunk(scorer, memory_budget_mb))
    else:
        score = lambda rows, deleted: scorer(deletion_batch(batch, rows, deleted)[0], rows, deleted)  # noqa: E731
        if isinstance(scorer, PrefixScorer):  # a deletion runs from its position on: chunks of like run lengths
            runs = batch.lengths[instance] - 1 - position
            chunks = length_chunks(runs, lambda width: rows_per_chunk(model, max(1, width), memory_budget_mb))
        else:
            chunks = every(rows_per_chunk(model, batch.tokens.shape[1] - 1, memory_budget_mb))
    scores = torch.zeros(batch.tokens.shape, dtype=original.dtype, device=original.device)
    for part in chunks:
        rows, deleted = instance[part], position[part]
        scores[rows, deleted] = tvd(model.distribution(score(rows, deleted)), original[rows]).to(scores.dtype)
    return scores


def deletions_per_chunk(scorer: PositionScorer, memory_budget_mb: float) -> int:
    """How many deletions a `PositionScorer` scores at once within the budget."""
    return max(1, int(memory_budget_mb * 2**20 // scorer.bytes_per_deletion))


def integrated_gradients(
    model: AttentionModel,
    batch: Batch,
    steps: int,
    internal_batch_size: int | None = None,
    target: torch.Tensor | None = None,
) -> torch.Tensor:
    """|sum_d IG_t,d| over the embeddings (Captum), baseline = zero embedding on the real tokens.

    The whole model (attention included, and the QA candidate mask) is differentiated; [SOS], [EOS] and PAD
    stay fixed, so the attributions over real tokens sum to y(x) - y(baseline). Target as for the gradient
    (`target`: [B] classes, QA/NLI; default the predicted ones). `internal_batch_size`: at most this many
    (instance, step) rows at once (instances in chunks when fewer than the batch's instances).
    """
    from captum.attr import IntegratedGradients  # here: importing captum costs every job that imports this module ~1 s

    rows = batch.size if internal_batch_size is None else internal_batch_size  # Captum runs all instances at once
    grouped = by_length(
        batch, rows, lambda part, index: integrated_gradients(model, part, steps, internal_batch_size, _at(target, index))
    )
    if grouped is not None:
        return grouped

    if model.is_binary:
        target = 1
    elif target is None:
        with torch.no_grad():
            target = model.predict(model(batch).logits)
    embedded = model.embed(batch.tokens).detach()
    baseline = embedded * ~batch.real_mask[..., None]

    def forward(inputs: torch.Tensor, tokens: torch.Tensor, lengths: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        candidates = rest[-1] if batch.candidates is not None else None
        question = rest[:2] if batch.question is not None else (None, None)
        expanded = Batch(tokens, lengths, torch.zeros_like(lengths), [], *question, candidates=candidates)
        if getattr(model, "single_pass_gradients", False):  # its own logits are decode(encode, attend) in one pass
            return model.distribution(model.logits(expanded, inputs))
        encoded = model.encode(expanded, inputs)
        return model.distribution(model.decode(encoded, model.attend(encoded, expanded), expanded))

    extra = (batch.tokens, batch.lengths) + ((batch.question, batch.question_lengths) if batch.question is not None else ())
    extra += (batch.candidates,) if batch.candidates is not None else ()  # QA answers outside the candidates stay -inf
    with torch.enable_grad():
        attributions = IntegratedGradients(forward).attribute(
            embedded,
            baselines=baseline,
            target=target,
            additional_forward_args=extra,
            n_steps=steps,
            internal_batch_size=internal_batch_size,
        )
    return (attributions.sum(-1).abs() * batch.real_mask).detach()
