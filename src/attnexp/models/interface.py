"""The one interface every analysis relies on: an attention model split into embed -> encode -> attend -> decode.

The split lets an analysis hold the encoded states fixed and swap the attention (permutation, adversary),
or feed its own embeddings (gradients, integrated gradients). The J&W attention classifier
(`models.classifier`) and the Transformer (`models.transformer`) both satisfy it, sharing the classifier
head of `models.head`; analyses type-hint `AttentionModel`, never a concrete class.
"""

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import torch

from attnexp.data.batching import Batch


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

    def forward(self, batch: Batch) -> Any:
        """An `Output`: logits, attention and the encoded states."""

    def distribution(self, logits: torch.Tensor) -> torch.Tensor:
        """Output distribution over classes [..., C] (binary: [1 - p, p])."""

    def predict(self, logits: torch.Tensor) -> torch.Tensor:
        """Predicted class per instance."""

    def parameter_groups(self) -> dict[str, list[torch.nn.Parameter]]:
        """Encoder, attention and decoder parameters (J&W train each with its own Adam)."""


def model_logits(model: AttentionModel, batch: Batch) -> torch.Tensor:
    """The logits alone: the model's own `logits` where it has one (the Transformer's keeps no attention maps),
    else its forward's."""
    own = getattr(model, "logits", None)
    return own(batch) if own is not None else model(batch).logits
