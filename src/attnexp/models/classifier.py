"""The attention classifier of J&W §4 as one plain nn.Module for BC, QA and NLI.

The forward pass is split into `encode` -> `attend` -> `decode` so that analyses can hold the hidden
states fixed and swap the attention (permutation, adversary) or feed their own embeddings (gradients).
The output layer, `distribution` and `predict` are the shared head (`models.head`).
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from attnexp.data.batching import Batch
from attnexp.models.attention import build_attention, masked_softmax
from attnexp.models.deletions import deletion_states
from attnexp.models.encoders import build_encoder, real_positions
from attnexp.models.head import ClassifierHead, Encoded, Output
from attnexp.models.interface import PositionScorer

__all__ = ["AttentionClassifier", "Encoded", "ModelConfig", "Output"]

# A deletion (`_spliced`) or an erasure's suffix (`suffix_averages`) whose kept scores all lie this far below its
# instance's highest is summed directly or in log space: the instance-scaled sums lose terms below e^-87 (float32),
# negligible only beside a kept term within e^-37 of them.
UNDERFLOW_MARGIN = 50.0


def suffix_averages(logs: torch.Tensor, states: torch.Tensor, steps: int) -> torch.Tensor:
    """sum_{j >= k} e^{s_j} x_j / sum_{j >= k} e^{s_j} for k = 1 .. steps, [B, R, steps, O], of log-weights `logs`
    [B, R, L] (at most 0, 0 at the instance's highest score; -inf: no weight) and states x [B, R, L, O]: the softmax
    of the scores kept when the first k are erased, averaging the states; 0 where nothing is left (as `erase`).

    Plain suffix sums of e^s where the highest score kept lies within `UNDERFLOW_MARGIN` of the instance's highest;
    a row (ranking) with a suffix further below (its weights may have underflowed in float32 beside the erased ones)
    is summed in log space instead (`logcumsumexp`, x split into its positive and negative parts), so that what is
    kept is still its softmax."""
    weights = logs.exp()
    suffix = lambda x: x.flip(2).cumsum(2).flip(2)[:, :, 1 : steps + 1]  # noqa: E731  sum over ranks >= k
    mass = suffix(weights).clamp(min=torch.finfo(weights.dtype).tiny)[..., None]  # nothing left: 0 / tiny = 0
    averaged = suffix(weights[..., None] * states) / mass
    highest = logs.flip(2).cummax(2).values.flip(2)[:, :, 1 : steps + 1]  # the highest score kept
    deep = ((highest < -UNDERFLOW_MARGIN) & (highest > float("-inf"))).any(-1)  # [B, R]
    if deep.any():
        averaged[deep] = _log_suffix_averages(logs[deep], states[deep], steps)
    return averaged


def _log_suffix_averages(logs: torch.Tensor, states: torch.Tensor, steps: int) -> torch.Tensor:
    """`suffix_averages` of rows [D, L] and [D, L, O] in log space: [D, steps, O]."""
    suffix = lambda x: x.flip(1).logcumsumexp(1).flip(1)[:, 1 : steps + 1]  # noqa: E731  log-sum over ranks >= k
    mass = suffix(logs)[..., None]
    positive = suffix(logs[..., None] + states.clamp(min=0).log())
    negative = suffix(logs[..., None] + (-states).clamp(min=0).log())
    averaged = (positive - mass).exp() - (negative - mass).exp()
    return averaged.masked_fill(mass == float("-inf"), 0.0)  # nothing left: 0


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int
    n_classes: int
    task: str  # "bc", "qa" or "nli"
    encoder: str
    attention: str
    embedding_dim: int = 300
    hidden_size: int = 128
    cnn_filters: int = 64
    mean_includes_padding: bool = False


class AttentionClassifier(ClassifierHead):
    checkpoint_kind = "classifier"

    def __init__(self, config: ModelConfig, embeddings: torch.Tensor | None = None):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config.vocab_size, config.embedding_dim, padding_idx=0)
        if embeddings is not None:
            self.embedding.weight.data.copy_(embeddings)
        self.encoder = build_encoder(
            config.encoder, config.embedding_dim, config.hidden_size, config.cnn_filters, config.mean_includes_padding
        )
        size = self.encoder.output_size
        conditioned = config.task != "bc"
        self.attention = build_attention(config.attention, size, conditioned)
        if conditioned:
            self.question_embedding = nn.Embedding(config.vocab_size, config.embedding_dim, padding_idx=0)
            self.question_embedding.weight.data.copy_(self.embedding.weight.data)
            self.question_encoder = build_encoder(
                config.encoder, config.embedding_dim, config.hidden_size, config.cnn_filters, config.mean_includes_padding
            )
        self.build_head(size)

    @property
    def feature_size(self) -> int:
        """Width of one encoded token state (the encoder's output size)."""
        return self.encoder.output_size

    @property
    def embedding_size(self) -> int:
        return self.config.embedding_dim

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.embedding(tokens)

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None) -> Encoded:
        """Hidden states of the passage and their attention scores (-inf off the real tokens; `attend` is their
        softmax, the erasure masks them); `embedded` replaces the embedding lookup (for gradients)."""
        embedded = self.embed(batch.tokens) if embedded is None else embedded
        hidden, _ = self.encoder(embedded, batch.lengths)
        question = None
        if not self.is_binary:
            _, question = self.question_encoder(self.question_embedding(batch.question), batch.question_lengths)
        scores = self.attention(hidden, question).masked_fill(~batch.real_mask, float("-inf"))
        return Encoded(hidden, question, scores=scores)

    def attend(self, encoded: Encoded, batch: Batch) -> torch.Tensor:
        scores = self.attention(encoded.hidden, encoded.question) if encoded.scores is None else encoded.scores
        return masked_softmax(scores, batch.real_mask)

    def decode(self, encoded: Encoded, attention: torch.Tensor, batch: Batch | None = None) -> torch.Tensor:
        """Logits from hidden states and any attention [B, L] (or [B, K, L] for K candidates at once)."""
        if attention.dim() == 2:
            context = torch.einsum("bl,blh->bh", attention, encoded.hidden)
        else:
            context = torch.einsum("bkl,blh->bkh", attention, encoded.hidden)
        return self.output_logits(context, encoded.question, batch, several=attention.dim() == 3)

    def first_layer_states(self, encoded: Encoded) -> tuple[torch.Tensor, torch.Tensor]:
        """The head's first (linear) layer moved inside the attention average, W (sum_l a_l h_l) + b =
        sum_l a_l (W h_l) + b: every state through it [B, L, O] (O = 1 for BC, H/2 for QA/NLI), and what it adds
        whatever the attention: its bias and, for QA/NLI, the question's projection ([O] or [B, O])."""
        layer = self.first_layer
        offset = layer.bias if self.is_binary else layer.bias + self.query_projection(encoded.question)
        return encoded.hidden @ layer.weight.T, offset

    def logits_from_average(self, averaged: torch.Tensor, batch: Batch | None, several: bool) -> torch.Tensor:
        """Logits from an attention average of `first_layer_states` plus its offset, [B, O] (or [B, K, O])."""
        if self.is_binary:
            return averaged.squeeze(-1)
        return self.logits_from_combined(averaged, batch, several)

    def decoder(self, encoded: Encoded, batch: Batch | None = None) -> Callable[[torch.Tensor], torch.Tensor]:
        """`decode` over fixed states through `first_layer_states`: the states are projected once, [B, L, H] ->
        [B, L, O], so each attention costs an average over O rather than H features, and the bias and question
        are added once. The same function as `decode` up to float rounding."""
        projected, offset = self.first_layer_states(encoded)

        def decode(attention: torch.Tensor) -> torch.Tensor:
            several = attention.dim() == 3
            averaged = torch.einsum("bkl,blo->bko" if several else "bl,blo->bo", attention, projected)
            shift = offset[:, None, :] if several and not self.is_binary else offset
            return self.logits_from_average(averaged + shift, batch, several)

        return decode

    @torch.no_grad()
    def predict_erased_in_order(
        self,
        encoded: Encoded,
        order: torch.Tensor,
        steps: int,
        batch: Batch,
        attention: torch.Tensor | None = None,
        memory_budget_mb: float = 256.0,
    ) -> torch.Tensor:
        """Predicted classes [B, R, steps] with the first k = 1 .. steps items of each ranking erased (`order`
        [B, R, L]: each position's rank, real tokens first) and the rest renormalised, as `decode_erased` gives them.
        The items kept are those ranked k and after, so the renormalised average is a ratio of suffix sums in rank
        order, of exp(s_l) W h_l over exp(s_l) (s: the attention scores, `Encoded.scores`, else the log-weights),
        taken by `suffix_averages` (in log space where the kept weights underflow): O(R L O) per instance instead of
        decoding [R, steps, L] attentions (O(R L^2 O)). Rankings run in chunks sized to the budget. Equal to
        `decode_erased` up to float rounding."""
        attention = self.attend(encoded, batch) if attention is None else attention
        scores = attention.log() if encoded.scores is None else encoded.scores  # -inf off the real tokens
        top = scores.amax(-1, keepdim=True)
        scores = scores - top.masked_fill(top == float("-inf"), 0.0)  # 0 at the instance's highest
        projected, offset = self.first_layer_states(encoded)
        size, rankings, width = order.shape
        positions = torch.arange(width, device=order.device).expand_as(order)
        by_rank = torch.empty_like(order).scatter_(-1, order, positions)  # [b, r, j]: the position ranked j
        per_ranking = 3 * 4 * size * width * projected.shape[-1]  # gathered states, their weights, the sums
        chunk = max(1, int(memory_budget_mb * 2**20 // per_ranking))
        shift = offset if self.is_binary else offset[:, None, :]
        predicted = []
        for start in range(0, rankings, chunk):
            ranked = by_rank[:, start : start + chunk]  # [B, R', L]
            logs = scores[:, None, :].expand_as(ranked).gather(-1, ranked)
            states = projected[torch.arange(size, device=order.device)[:, None, None], ranked]  # [B, R', L, O]
            averaged = suffix_averages(logs, states, steps).flatten(1, 2)  # [B, R' * steps, O]
            logits = self.logits_from_average(averaged + shift, batch, several=True)
            predicted.append(self.predict(logits).view(size, ranked.shape[1], steps))
        return torch.cat(predicted, dim=1)

    def deletion_logits(self, batch: Batch) -> Callable[[Batch, torch.Tensor, torch.Tensor], torch.Tensor] | PositionScorer:
        """The deletions' states from the batch's own run (`models.deletions`, equal up to float rounding); over the
        CNN's and the Average encoder's, which are mostly the instance's own, the attention average is spliced
        from sums over the instance's own states (`_spliced`, a `PositionScorer`: no deletion rows are built)."""
        states = deletion_states(self.encoder, self.embed(batch.tokens), batch.lengths)
        if states is None:
            return super().deletion_logits(batch)
        question = self.encode(batch).question if not self.is_binary else None
        if hasattr(states, "new_states"):
            return self._spliced(states, question, batch)

        def logits(deleted: Batch, instance: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
            encoded = Encoded(states(instance, position), None if question is None else question[instance])
            return self.decode(encoded, self.attend(encoded, deleted), deleted)

        return logits

    def _spliced(self, states, question: torch.Tensor | None, batch: Batch) -> PositionScorer:
        """Deletion logits when deleting token t changes only the states at t - r .. t + r - 1 (`states.radius` r:
        the CNN's kernel radius, 0 for Average) and leaves every other state the instance's own, in order.

        The attention-weighted average (the head's first layer moved inside, as in `decoder`) then splits into the
        instance's own states left of the window, those right of it, and the 2r recomputed ones. The first two are
        prefix and suffix sums of exp(score) and exp(score) W h, taken once per instance; only the 2r new states
        are scored per deletion: O(L r O) per instance instead of O(L^2 O) for gathering every deletion's states.
        Prefix and suffix sums are sums of the instance's own terms, never differences, so nothing cancels. They
        are scaled to the instance's highest score; a row whose kept scores all lie more than `UNDERFLOW_MARGIN`
        below it (its terms may have underflowed) is summed directly, over the instance's width, in parts within
        the memory budget. Equal to `decode` on the re-encoded deletions up to float rounding
        (`tests/models/test_deletions.py`). A deletion needs no row of tokens: its length and candidates are its
        instance's, so the caller builds none (`PositionScorer`) and chunks deletions by `bytes_per_deletion`."""
        layer, hidden, r = self.first_layer, states.hidden, states.radius
        width = hidden.shape[1]
        scores = self.attention(hidden, question).masked_fill(~batch.real_mask, float("-inf"))  # [B, W]
        projected, offset = self.first_layer_states(Encoded(hidden, question))  # [B, W, O]
        top = scores.amax(1)
        top = top.masked_fill(top == float("-inf"), 0.0)  # an instance without real tokens has no deletions
        weights = torch.exp(scores - top[:, None])  # exactly 0 off the real tokens
        terms = (weights, weights[..., None] * projected)
        before = [torch.cat([x.new_zeros(x[:, :1].shape), x.cumsum(1)], 1) for x in terms]  # [b, a]: sum over j < a
        after = [torch.cat([x.flip(1).cumsum(1).flip(1), x.new_zeros(x[:, :1].shape)], 1) for x in terms]  # j >= b
        lowest = scores.new_full((len(scores), 1), float("-inf"))
        before_max = torch.cat([lowest, scores.cummax(1).values], 1)
        after_max = torch.cat([scores.flip(1).cummax(1).values.flip(1), lowest], 1)
        features, outputs, embedding = hidden.shape[-1], projected.shape[-1], self.config.embedding_dim
        # float32 and int64 temporaries of one deletion: ~30 scalars, a few [O] and [C] rows, the 2r new states (their
        # 4r-token windows, convolutions, scores and projections); doubled for what torch keeps while it computes
        per_deletion = 2 * (8 * 30 + 4 * 6 * (outputs + self.config.n_classes) + 4 * features)
        per_deletion += 2 * 4 * r * (4 * embedding + 8 * features + 2 * outputs + 16)
        per_direct_row = 2 * width * (24 + 4 * outputs)  # a row summed directly: masks, its scores and weights, W h

        def logits(instance: torch.Tensor, position: torch.Tensor, memory_budget_mb: float) -> torch.Tensor:
            lengths = batch.lengths[instance] - 1  # the deletions'
            left, right = (position - r).clamp(min=0), (position + r + 1).clamp(max=width)  # own positions kept
            rows_question = None if question is None else question[instance]
            new = states.new_states(instance, position)  # [R, 2r, F]
            columns = position[:, None] - r + torch.arange(2 * r, device=position.device)[None, :]
            new_scores = self.attention(new, rows_question).masked_fill(~real_positions(columns, lengths), float("-inf"))
            kept_max = torch.maximum(before_max[instance, left], after_max[instance, right])
            row_max = torch.cat([kept_max[:, None], new_scores], 1).amax(1)
            row_max = row_max.masked_fill(row_max == float("-inf"), 0.0)  # nothing left: every weight 0
            scale = torch.exp(top[instance] - row_max)
            kept_weight = scale * (before[0][instance, left] + after[0][instance, right])
            kept_sum = scale[:, None] * (before[1][instance, left] + after[1][instance, right])
            direct = (kept_max < top[instance] - UNDERFLOW_MARGIN).nonzero().squeeze(1)
            part = max(1, int(memory_budget_mb * 2**20 // per_direct_row))
            positions = torch.arange(width, device=position.device)
            for rows in direct.split(part):
                own, low, high = instance[rows], left[rows, None], right[rows, None]
                kept = (positions < low) | (positions >= high)
                own_weights = torch.exp(scores[own].masked_fill(~kept, float("-inf")) - row_max[rows, None])
                kept_weight[rows] = own_weights.sum(1)
                kept_sum[rows] = torch.einsum("rw,rwo->ro", own_weights, projected[own])
            new_weights = torch.exp(new_scores - row_max[:, None])  # [R, 2r]
            total = kept_weight + new_weights.sum(1)
            summed = kept_sum + torch.einsum("rk,rko->ro", new_weights, new @ layer.weight.T)
            averaged = summed / total.clamp(min=torch.finfo(total.dtype).tiny)[:, None]  # no token left: 0
            logits = self.logits_from_average(averaged + (offset if question is None else offset[instance]), None, False)
            if batch.candidates is not None:  # QA: the answers outside a deletion's (its instance's) candidates -inf
                logits = logits.masked_fill(~batch.candidates[instance], float("-inf"))
            return logits

        return PositionScorer(logits, per_deletion)

    def parameter_groups(self) -> dict[str, list[nn.Parameter]]:
        """Encoder, attention and decoder parameters (J&W train each with its own Adam)."""
        attention = list(self.attention.parameters())
        attention_ids = {id(p) for p in attention}
        decoder = self.head_parameters()
        decoder_ids = {id(p) for p in decoder}
        encoder = [p for p in self.parameters() if id(p) not in attention_ids | decoder_ids]
        return {"encoder": encoder, "attention": attention, "decoder": decoder}
