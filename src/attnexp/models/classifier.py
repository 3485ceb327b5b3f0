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
from attnexp.models.deletions import AverageDeletions, deletion_states
from attnexp.models.encoders import build_encoder
from attnexp.models.head import ClassifierHead, Encoded, Output

__all__ = ["AttentionClassifier", "Encoded", "ModelConfig", "Output"]


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
        """Hidden states of the passage; `embedded` replaces the embedding lookup (for gradients)."""
        embedded = self.embed(batch.tokens) if embedded is None else embedded
        hidden, _ = self.encoder(embedded, batch.lengths)
        question = None
        if not self.is_binary:
            _, question = self.question_encoder(self.question_embedding(batch.question), batch.question_lengths)
        return Encoded(hidden, question)

    def attend(self, encoded: Encoded, batch: Batch) -> torch.Tensor:
        return masked_softmax(self.attention(encoded.hidden, encoded.question), batch.real_mask)

    def decode(self, encoded: Encoded, attention: torch.Tensor, batch: Batch | None = None) -> torch.Tensor:
        """Logits from hidden states and any attention [B, L] (or [B, K, L] for K candidates at once)."""
        if attention.dim() == 2:
            context = torch.einsum("bl,blh->bh", attention, encoded.hidden)
        else:
            context = torch.einsum("bkl,blh->bkh", attention, encoded.hidden)
        return self.output_logits(context, encoded.question, batch, several=attention.dim() == 3)

    def decoder(self, encoded: Encoded, batch: Batch | None = None) -> Callable[[torch.Tensor], torch.Tensor]:
        """`decode` over fixed states, the head's first (linear) layer moved inside the attention average:
        W (sum_l a_l h_l) + b = sum_l a_l (W h_l) + b. The states are projected once, [B, L, H] -> [B, L, O]
        (O = 1 for BC, H/2 for QA/NLI), so each attention costs an average over O rather than H features.
        The bias and, for QA/NLI, the question's projection are the same for every attention, so they are summed
        once too. The same function as `decode` up to float rounding."""
        layer = self.first_layer
        projected = encoded.hidden @ layer.weight.T
        offset = layer.bias if self.is_binary else layer.bias + self.query_projection(encoded.question)

        def decode(attention: torch.Tensor) -> torch.Tensor:
            several = attention.dim() == 3
            averaged = torch.einsum("bkl,blo->bko" if several else "bl,blo->bo", attention, projected)
            if self.is_binary:
                return (averaged + offset).squeeze(-1)
            return self.logits_from_combined(averaged + (offset[:, None, :] if several else offset), batch, several)

        return decode

    def deletion_logits(self, batch: Batch) -> Callable[[Batch, torch.Tensor, torch.Tensor], torch.Tensor]:
        """The deletions' states from the batch's own run (`models.deletions`, equal up to float rounding): the
        Average encoder's are the instance's own (`_renormalised`); over the CNN's, mostly the instance's own, the
        attention scores and the head's first layer run once per distinct state (`_decode_table`)."""
        states = deletion_states(self.encoder, self.embed(batch.tokens), batch.lengths)
        if states is None:
            return super().deletion_logits(batch)
        question = self.encode(batch).question if not self.is_binary else None
        if isinstance(states, AverageDeletions):
            return self._renormalised(states.hidden, question, batch)
        if hasattr(states, "table"):
            return lambda deleted, instance, position: self._decode_table(states, instance, position, deleted, question)

        def logits(deleted: Batch, instance: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
            encoded = Encoded(states(instance, position), None if question is None else question[instance])
            return self.decode(encoded, self.attend(encoded, deleted), deleted)

        return logits

    def _renormalised(
        self, hidden: torch.Tensor, question: torch.Tensor | None, batch: Batch
    ) -> Callable[[Batch, torch.Tensor, torch.Tensor], torch.Tensor]:
        """Deletion logits for a token-wise encoder (Average): deleting token t leaves every other state and the
        question as they were, so the deletion's attention is the instance's own scores softmaxed without t, and
        its context averages the instance's own states (the head's first layer moved inside, as in `decoder`).
        The rows of one instance run as one block of a batched matrix product, in the instance's own positions:
        O(L) states per deletion instead of a gathered copy of them. Equal to `decode` up to float rounding."""
        scores, projected = self.attention(hidden, question), hidden @ self.first_layer.weight.T

        def logits(deleted: Batch, instance: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
            rows = torch.arange(len(instance), device=instance.device)
            kept = batch.real_mask[instance].clone()
            kept[rows, position] = False
            attention = masked_softmax(scores[instance], kept)  # [R, W]
            # rows of one instance (consecutive, as leave_one_out passes them) form one block [U, T, W]
            blocks, counts = torch.unique_consecutive(instance, return_counts=True)
            block = torch.repeat_interleave(torch.arange(len(blocks), device=rows.device), counts)
            slot = rows - torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts)
            grouped = attention.new_zeros(len(blocks), int(counts.max()) if len(rows) else 0, attention.shape[1])
            grouped[block, slot] = attention
            averaged = torch.bmm(grouped, projected[blocks])[block, slot]  # [R, O]
            rows_question = None if question is None else question[instance]
            return self.logits_from_first_layer(averaged + self.first_layer.bias, rows_question, deleted, several=False)

        return logits

    def _decode_table(
        self, states, instance: torch.Tensor, position: torch.Tensor, batch: Batch, question: torch.Tensor | None
    ) -> torch.Tensor:
        """Logits of the deletions (`instance`, `position`) whose states are `table[index]` [R, L, H] (`states.table`).
        The attention scores and the head's first (linear) layer are functions of one state and, for QA/NLI, of its
        instance's question, which a deletion leaves unchanged; so they run once per table row and are gathered (the
        layer moved inside the attention average, as in `decoder`), not once per state of every deletion. Equal to
        `decode` up to float rounding."""
        table, index = states.table(instance, position)
        if question is None:
            scores = self.attention(table[None])[0]
        else:  # each row with its own instance's question
            scores = self.attention(table[:, None, :], question[states.owners(instance)])[:, 0]
        projected = table @ self.first_layer.weight.T
        attention = masked_softmax(scores[index], batch.real_mask)
        averaged = torch.einsum("bl,blo->bo", attention, projected[index])
        rows_question = None if question is None else question[instance]
        return self.logits_from_first_layer(averaged + self.first_layer.bias, rows_question, batch, several=False)

    def parameter_groups(self) -> dict[str, list[nn.Parameter]]:
        """Encoder, attention and decoder parameters (J&W train each with its own Adam)."""
        attention = list(self.attention.parameters())
        attention_ids = {id(p) for p in attention}
        decoder = self.head_parameters()
        decoder_ids = {id(p) for p in decoder}
        encoder = [p for p in self.parameters() if id(p) not in attention_ids | decoder_ids]
        return {"encoder": encoder, "attention": attention, "decoder": decoder}
