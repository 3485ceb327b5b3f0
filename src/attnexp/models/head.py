"""The classifier head every attention model shares (J&W §4): the output layer(s) on top of the attended
features, the output distribution and the predicted class, plus the common `forward`.

A model builds its encoder and attention, then calls `build_head(size)`; it provides `encode`, `attend` and
`decode` (which ends in `output_logits`). Binary classification (BC) has one logit; QA/NLI combine the
attended context with the question encoding before C logits.

The head also holds the defaults of the optional capabilities of `models.interface.AttentionModel`
(`logits`, `input_lengths`, `decode_permuted`, `predict_erased_in_order`, `blank_id`, `tokenizer`,
`checkpoint_kind`): what a model with
one attention vector, our vocabulary and no tokenizer of its own does. A model overrides only those it has
its own behaviour for.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from attnexp.data.batching import Batch


@dataclass
class Encoded:
    hidden: torch.Tensor  # [B, L, H] the states attention averages over
    question: torch.Tensor | None  # [B, H] question summary (QA/NLI)
    maps: torch.Tensor | None = None  # [B, layers, heads, L, L] every layer's attention; None: no per-layer maps
    # [B, L] the attention's scores before the softmax, -inf off the real tokens (`attend` is their softmax): the
    # erasure masks them (`models.attention.erase`); None where the model keeps only its weights
    scores: torch.Tensor | None = None


@dataclass
class Output:
    logits: torch.Tensor  # [B] (BC) or [B, C]
    attention: torch.Tensor  # [B, L], 0 outside real tokens
    encoded: Encoded


class ClassifierHead(nn.Module):
    """Base of every model family (`AttentionClassifier`, `TransformerClassifier`, `HFClassifier`); `self.config`
    has `task` and `n_classes`."""

    config: object
    checkpoint_kind: str | None = None  # what `models.checkpoint` records, so `load_model` rebuilds the right class
    blank_id: int | None = None  # the token A&Z blank-out substitutes; None: the caller's (our UNK, the API tokenizer's)
    tokenizer: Any = None  # the tokenizer the model carries (Hugging Face); None: the dataset's vocabulary
    # The output ignores a shift of one input vector by c·1 (every path from `embed` passes a LayerNorm first: a
    # pre-LN Transformer), so the input gradient's components sum to 0 (A&Z §4, `analyses.az.gradient_measure`).
    input_shift_invariant: bool = False
    # float32 widths (x feature_size) a token holds at once in a forward pass without gradients, and keeps for a
    # backward pass: what `rows_per_chunk` sizes memory chunks by
    forward_widths: int = 8
    activation_widths: int = 8

    def build_head(self, size: int) -> None:
        """BC: w^T c + b; QA/NLI: W2 tanh(W1p c + W1q q) (J&W §4). Registers the modules in this order."""
        if self.is_binary:
            self.output = nn.Linear(size, 1)
        else:
            self.context_projection = nn.Linear(size, size // 2)
            self.query_projection = nn.Linear(size, size // 2)
            self.output = nn.Linear(size // 2, self.config.n_classes)

    @property
    def is_binary(self) -> bool:
        """Binary classification (one logit, sigmoid) rather than QA/NLI (C logits, softmax)."""
        return self.config.task == "bc"

    def output_logits(
        self, features: torch.Tensor, question: torch.Tensor | None, batch: Batch | None, several: bool
    ) -> torch.Tensor:
        """Logits of attended features [B, H] (or [B, K, H] for K candidate attentions: `several`);
        QA/NLI answers that are not candidates of the instance get -inf."""
        return self.logits_from_first_layer(self.first_layer(features), question, batch, several)

    @property
    def first_layer(self) -> nn.Linear:
        """The head's first layer, linear in the attended features: the output (BC) or the context projection."""
        return self.output if self.is_binary else self.context_projection

    def logits_from_first_layer(
        self, projected: torch.Tensor, question: torch.Tensor | None, batch: Batch | None, several: bool
    ) -> torch.Tensor:
        """`output_logits` from the first layer's output [B, O] (or [B, K, O]) onwards."""
        if self.is_binary:
            return projected.squeeze(-1)
        question = question[:, None, :] if several else question
        return self.logits_from_combined(projected + self.query_projection(question), batch, several)

    def logits_from_combined(self, combined: torch.Tensor, batch: Batch | None, several: bool) -> torch.Tensor:
        """QA/NLI: the logits from W1p c + W1q q [B, O] (or [B, K, O]) onwards, non-candidate answers -inf."""
        logits = self.output(torch.tanh(combined))
        if batch is not None and batch.candidates is not None:
            mask = batch.candidates[:, None, :] if several else batch.candidates
            logits = logits.masked_fill(~mask, float("-inf"))
        return logits

    def decoder(self, encoded: Encoded, batch: Batch | None = None) -> Callable[[torch.Tensor], torch.Tensor]:
        """`decode(encoded, attention, batch)` as a function of the attention alone, for analyses that decode many
        attentions over the same states (the adversary's steps, permutations). Models whose head starts linear in
        the attended features override it to apply that layer to the states once."""
        return lambda attention: self.decode(encoded, attention, batch)

    def decode_permuted(
        self, encoded: Encoded, index: torch.Tensor, batch: Batch, attention: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits [B, P(, C)] with the model's attention permuted by `index` [B, P, L] (entry [b, p, t]: the position
        whose weight moves to t), the states fixed (J&W §6.4); `attention`: the forward's, when the caller has it
        (else recomputed). A multi-head model overrides it to permute every head."""
        attention = self.attend(encoded, batch) if attention is None else attention
        return self.decoder(encoded, batch)(attention[:, None, :].expand_as(index).gather(-1, index))

    def decode_erased(
        self, encoded: Encoded, erased: torch.Tensor, batch: Batch, attention: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits [B, K(, C)] with the attention weights at `erased` [B, K, L] (bool) set to 0 and the rest renormalised
        (Serrano & Smith's erasure), the states fixed; `attention`: the forward's, when the caller has it. Where the
        model keeps its scores (`Encoded.scores`), the softmax of those with `erased` masked (defined when the kept
        weights underflow). A model whose heads attend separately overrides it to erase every head's weights."""
        from attnexp.models.attention import erase

        attention = self.attend(encoded, batch) if attention is None else attention
        scores = None if encoded.scores is None else encoded.scores[:, None, :]
        return self.decoder(encoded, batch)(erase(attention[:, None, :], erased, scores))

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
        [B, R, L]: each position's rank, real tokens first; Serrano & Smith's first-flip test): one erased attention
        [B, R * K, L] per chunk of k through `decode_erased`, the chunk sized to the budget. A model whose head is
        linear in the attended states overrides it with sums in rank order."""
        size, rankings, width = order.shape
        per_attention = 4 * size * width * (self.feature_size + 4)
        chunk = max(1, int(memory_budget_mb * 2**20 // (per_attention * rankings)))  # steps k decoded together
        predicted = []
        for start in range(1, steps + 1, chunk):
            k = torch.arange(start, min(start + chunk, steps + 1), device=order.device)
            erased = order[:, :, None, :] < k[None, None, :, None]  # [B, R, K, L]: the first k items of each ranking
            logits = self.decode_erased(encoded, erased.reshape(size, rankings * len(k), width), batch, attention)
            predicted.append(self.predict(logits).view(size, rankings, len(k)))
        return torch.cat(predicted, dim=-1) if predicted else order.new_zeros(size, rankings, 0)

    def deletion_logits(self, batch: Batch) -> Callable[[Batch, torch.Tensor, torch.Tensor], torch.Tensor]:
        """How leave-one-out scores the single-token deletions of `batch`: a function of (the deletions as a batch,
        each row's instance in `batch`, the position it deleted) giving their logits. By default the model is run on
        the deletions; a model that can reuse the undeleted parts of `batch` (J&W's classifier) overrides it (with a
        `models.interface.PositionScorer` where it needs no deletion batch)."""
        return lambda deleted, instance, position: self(deleted).logits

    def variant_logits(
        self, batch: Batch, memory_budget_mb: float = 256.0
    ) -> Callable[[Batch, torch.Tensor, torch.Tensor], torch.Tensor]:
        """How blank-out and the ERASER deletions score variants of `batch`'s instances: (variants as a batch, each
        row's instance, the first position it changes) -> logits. By default the model runs on the variants; a causal
        Hugging Face model reuses the unchanged prefix (a `models.interface.PrefixScorer`)."""
        return lambda variants, instance, first: self.logits(variants)

    def input_lengths(self, batch: Batch) -> torch.Tensor:
        """Positions each example has as the model's input [B]: all of `batch.lengths`, both markers included."""
        return batch.lengths

    def logits(self, batch: Batch, embedded: torch.Tensor | None = None) -> torch.Tensor:
        """The logits alone: the forward's; with `embedded` (replacing `embed(batch.tokens)`, for input gradients)
        `decode` of the model's own attention over `encode(batch, embedded)`, so gradients flow through both."""
        if embedded is None:
            return self(batch).logits
        encoded = self.encode(batch, embedded)
        return self.decode(encoded, self.attend(encoded, batch), batch)

    def fixed_attention_logits(self, batch: Batch, embedded: torch.Tensor) -> torch.Tensor:
        """The logits over `embedded` with the explained attention held fixed (detached), the function J&W's gradient
        importance differentiates: `decode` of the model's own attention, detached, over `encode(batch, embedded)`."""
        encoded = self.encode(batch, embedded)
        return self.decode(encoded, self.attend(encoded, batch).detach(), batch)

    def head_parameters(self) -> list[nn.Parameter]:
        """The decoder's parameters (J&W give them their own Adam for BC)."""
        modules = [self.output] + ([self.context_projection, self.query_projection] if not self.is_binary else [])
        return [p for m in modules for p in m.parameters()]

    def distribution(self, logits: torch.Tensor) -> torch.Tensor:
        """Output distribution over classes [..., C]; BC gives [1 - p, p]."""
        if self.is_binary:
            p = torch.sigmoid(logits)
            return torch.stack([1 - p, p], dim=-1)
        return torch.softmax(logits, dim=-1)

    def predict(self, logits: torch.Tensor) -> torch.Tensor:
        """Predicted class: BC round(p) with p = 0.5 -> 0; QA/NLI argmax."""
        if self.is_binary:
            return (logits > 0).long()
        return logits.argmax(dim=-1)

    def forward(self, batch: Batch) -> Output:
        encoded = self.encode(batch)
        attention = self.attend(encoded, batch)
        return Output(self.decode(encoded, attention, batch), attention, encoded)


class WidthHead(ClassifierHead):
    """The head of a model whose token states and input embeddings are both `config.width` wide (the Transformer,
    the Hugging Face wrapper)."""

    @property
    def feature_size(self) -> int:
        """Width of one token state: the model width."""
        return self.config.width

    @property
    def embedding_size(self) -> int:
        return self.config.width
