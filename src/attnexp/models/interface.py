"""The one interface every analysis relies on: an attention model split into embed -> encode -> attend -> decode.

The split lets an analysis hold the encoded states fixed and swap the attention (permutation, adversary),
or feed its own embeddings (gradients, integrated gradients). The three model families, the J&W attention
classifier (`models.classifier`), the Transformer (`models.transformer`) and the Hugging Face wrapper
(`models.hf`), satisfy it through the classifier head of `models.head`, which also holds the defaults of the
capabilities not every model has its own of (`logits`, `fixed_attention_logits`, `input_lengths`, `decode_permuted`,
`predict_erased_in_order`, `blank_id`,
`input_shift_invariant`, `tokenizer`, `checkpoint_kind`); analyses type-hint `AttentionModel`, never a concrete class, and call
those capabilities directly.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch

from attnexp.data.batching import Batch


@dataclass(frozen=True)
class PositionScorer:
    """A leave-one-out scorer that builds what it needs from (instances, deleted positions) alone, so the caller
    builds no deletion rows (one row of a long document is its whole length, and a document deleted at every
    position, length²): `logits(instance, position, memory_budget_mb)` gives the deletions' logits, allocating
    about `bytes_per_deletion` per deletion (the caller sizes its chunks of deletions by it) and anything more in
    parts within `memory_budget_mb`."""

    logits: Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor]
    bytes_per_deletion: int


@dataclass(frozen=True)
class PrefixScorer:
    """A scorer of variants (deletions, blanks) that reuses what each variant shares with its instance: a causal
    model's keys and values before the first changed position, computed once for the batch. `logits(variants,
    instance, first)` gives the variants' logits (`first` [V]: the first batch position where each differs from its
    instance); only positions from `first` on are run, so the caller puts variants of like `first` together."""

    logits: Callable[[Batch, torch.Tensor, torch.Tensor], torch.Tensor]
    own: torch.Tensor  # the batch's own logits, from the pass that cached the keys (callers need not run it again)

    def __call__(self, variants: Batch, instance: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
        return self.logits(variants, instance, first)


@runtime_checkable
class AttentionModel(Protocol):
    config: Any  # a frozen dataclass with at least `task`, `n_classes`, `vocab_size`

    @property
    def is_binary(self) -> bool:
        """Binary classification (one logit, sigmoid) rather than QA/NLI (C logits, softmax)."""

    @property
    def feature_size(self) -> int:
        """Width of one encoded token state (what attention averages over); analyses size memory chunks by it."""

    @property
    def embedding_size(self) -> int:
        """Width of one input embedding (`embed`'s last dimension); gradient analyses size chunks by it."""

    @property
    def checkpoint_kind(self) -> str | None:
        """The model kind `models.checkpoint` records to rebuild the right class (None: not reloadable)."""

    @property
    def blank_id(self) -> int | None:
        """The token A&Z blank-out substitutes ([MASK] for Hugging Face BERTs); None: the caller's default."""

    @property
    def input_shift_invariant(self) -> bool:
        """The output ignores a shift of an input vector by c·1 (pre-LayerNorm Transformer): Σ_d ∂s/∂e_jd = 0."""

    @property
    def tokenizer(self) -> Any:
        """The tokenizer the model carries (a Hugging Face model's own); None: the dataset's vocabulary."""

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """Input embeddings [B, L, E] of token ids [B, L]."""

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None) -> Any:
        """Encoded states (an `Encoded`); `embedded` replaces `embed(batch.tokens)` (for gradients)."""

    def attend(self, encoded: Any, batch: Batch) -> torch.Tensor:
        """The model's attention [B, L] over real tokens (0 elsewhere, rows sum to 1)."""

    def decode(self, encoded: Any, attention: torch.Tensor, batch: Batch | None = None) -> torch.Tensor:
        """Logits for any attention [B, L] (or [B, K, L] for K candidates at once)."""

    def decoder(self, encoded: Any, batch: Batch | None = None) -> Callable[[torch.Tensor], torch.Tensor]:
        """`decode(encoded, ., batch)` as a function of the attention alone (for many attentions over fixed states)."""

    def decode_permuted(
        self, encoded: Any, index: torch.Tensor, batch: Batch, attention: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits [B, P(, C)] with the attention permuted by `index` [B, P, L] (multi-head models: every head's)."""

    def decode_erased(
        self, encoded: Any, erased: torch.Tensor, batch: Batch, attention: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits [B, K(, C)] with the attention at `erased` [B, K, L] erased and renormalised (multi-head: every head's)."""

    def predict_erased_in_order(
        self,
        encoded: Any,
        order: torch.Tensor,
        steps: int,
        batch: Batch,
        attention: torch.Tensor | None = None,
        memory_budget_mb: float = 256.0,
    ) -> torch.Tensor:
        """Predicted classes [B, R, steps] with each ranking's first k = 1 .. steps items erased (`order` [B, R, L]:
        each position's rank, real tokens first), as `decode_erased` would decode them."""

    def deletion_logits(self, batch: Batch) -> Callable[[Batch, torch.Tensor, torch.Tensor], torch.Tensor] | PositionScorer:
        """Leave-one-out's scorer: (deletions as a batch, their instances, deleted positions) -> their logits; or a
        `PositionScorer`, which needs no deletion batch."""

    def variant_logits(
        self, batch: Batch, memory_budget_mb: float = 256.0
    ) -> Callable[[Batch, torch.Tensor, torch.Tensor], torch.Tensor] | PrefixScorer:
        """How blank-out and the ERASER deletions score variants of `batch`'s instances: (variants as a batch, their
        instances, the first position each changes) -> their logits; a `PrefixScorer` where the model reuses the
        unchanged prefix (a causal Hugging Face model), keeping what it holds for a pass within `memory_budget_mb`."""

    def input_lengths(self, batch: Batch) -> torch.Tensor:
        """Positions each example has as the model's input [B] (the Transformer drops the closing marker)."""

    def logits(self, batch: Batch, embedded: torch.Tensor | None = None) -> torch.Tensor:
        """The logits alone (no attention maps where the model can skip them); `embedded` replaces `embed`."""

    def fixed_attention_logits(self, batch: Batch, embedded: torch.Tensor) -> torch.Tensor:
        """The logits over `embedded` (replacing `embed`) with the explained attention detached: what the gradient
        importance differentiates (one pass where the model can hold its attention fixed inside it)."""

    def forward(self, batch: Batch) -> Any:
        """An `Output`: logits, attention and the encoded states."""

    def distribution(self, logits: torch.Tensor) -> torch.Tensor:
        """Output distribution over classes [..., C] (binary: [1 - p, p])."""

    def predict(self, logits: torch.Tensor) -> torch.Tensor:
        """Predicted class per instance."""

    def parameter_groups(self) -> dict[str, list[torch.nn.Parameter]]:
        """Encoder, attention and decoder parameters (J&W train each with its own Adam)."""


def model_logits(model: AttentionModel, batch: Batch) -> torch.Tensor:
    """`model.logits(batch)`, kept for the callers that import it."""
    return model.logits(batch)
