"""The attention classifier of J&W §4 as one plain nn.Module for BC, QA and NLI.

The forward pass is split into `encode` -> `attend` -> `decode` so that analyses can hold the hidden
states fixed and swap the attention (permutation, adversary) or feed their own embeddings (gradients).
"""

from dataclasses import asdict, dataclass

import torch
from torch import nn

from attnexp.data.batching import Batch
from attnexp.models.attention import build_attention, masked_softmax
from attnexp.models.encoders import build_encoder


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


@dataclass
class Encoded:
    hidden: torch.Tensor  # [B, L, H]
    question: torch.Tensor | None  # [B, H] question summary (QA/NLI)


@dataclass
class Output:
    logits: torch.Tensor  # [B] (BC) or [B, C]
    attention: torch.Tensor  # [B, L], 0 outside real tokens
    encoded: Encoded


class AttentionClassifier(nn.Module):
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
            self.context_projection = nn.Linear(size, size // 2)
            self.query_projection = nn.Linear(size, size // 2)
            self.output = nn.Linear(size // 2, config.n_classes)
        else:
            self.output = nn.Linear(size, 1)

    @property
    def is_binary(self) -> bool:
        return self.config.task == "bc"

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
        return output_logits(self, context, encoded.question, batch, several=attention.dim() == 3)

    def forward(self, batch: Batch) -> Output:
        encoded = self.encode(batch)
        attention = self.attend(encoded, batch)
        return Output(self.decode(encoded, attention, batch), attention, encoded)

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

    def parameter_groups(self) -> dict[str, list[nn.Parameter]]:
        """Encoder, attention and decoder parameters (J&W train each with its own Adam)."""
        attention = list(self.attention.parameters())
        attention_ids = {id(p) for p in attention}
        decoder_modules = [self.output] + ([self.context_projection, self.query_projection] if not self.is_binary else [])
        decoder = [p for m in decoder_modules for p in m.parameters()]
        decoder_ids = {id(p) for p in decoder}
        encoder = [p for p in self.parameters() if id(p) not in attention_ids | decoder_ids]
        return {"encoder": encoder, "attention": attention, "decoder": decoder}


def output_logits(
    model: nn.Module, features: torch.Tensor, question: torch.Tensor | None, batch: Batch | None, several: bool
) -> torch.Tensor:
    """The decoder head shared by every model: BC w^T c + b, or QA/NLI W2 tanh(W1p c + W1q q) with
    non-candidate answers at -inf. `several`: features are [B, K, H] (K candidate attentions)."""
    if model.is_binary:
        return model.output(features).squeeze(-1)
    question = question[:, None, :] if several else question
    logits = model.output(torch.tanh(model.context_projection(features) + model.query_projection(question)))
    if batch is not None and batch.candidates is not None:
        mask = batch.candidates[:, None, :] if several else batch.candidates
        logits = logits.masked_fill(~mask, float("-inf"))
    return logits


def save_model(model: AttentionClassifier, path, extra: dict | None = None) -> None:
    from attnexp.io import atomic_path

    with atomic_path(path) as tmp:
        torch.save({"config": asdict(model.config), "state_dict": model.state_dict(), "extra": extra or {}}, tmp)


def load_model(path) -> AttentionClassifier:
    """Load a checkpoint of any encoder, the Transformer (attnexp.transformer) included."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    if checkpoint["config"]["encoder"] == "transformer":
        from attnexp.models.transformer import TransformerClassifier, TransformerConfig

        model = TransformerClassifier(TransformerConfig(**checkpoint["config"]))
    else:
        model = AttentionClassifier(ModelConfig(**checkpoint["config"]))
    model.load_state_dict(checkpoint["state_dict"])
    return model.eval()
