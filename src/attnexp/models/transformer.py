"""A GPT-2-style Transformer encoder classifier (A&Z §2.1); an `AttentionModel` like the J&W classifier.

Pre-LayerNorm blocks without a causal mask, learned positions, a final LayerNorm and a classifier on
the [CLS] position (our [SOS] at position 0). The input is [CLS] + the words (A&Z: up to the verb): the
closing marker of the shared preprocessed format is masked out as a key, so no position attends to it and
the output does not depend on it. Every layer's per-head attention is exposed by `attention_maps`.

Two variants (`config.attention`):
  - "self" (DEFAULT, A&Z): every layer is a standard GPT-2 block, all heads, all positions; the [CLS]
    row of the last layer attends to [CLS] and every word like any other row. `attend` reports the
    head-averaged last-layer [CLS] row over the words (renormalised) for reading only; `decode` cannot
    swap it (the heads differ), so the J&W permutation and adversary do not run on this variant.
  - "tiedcls": the last layer's [CLS] query uses one distribution over the words, the average of its
    heads' distributions, tied across heads, with no weight on [CLS] itself. The classifier then depends
    on the last layer's attention only through that [B, L] vector (`attend`), and `decode` recomputes
    the [CLS] output for any other attention exactly, like `AttentionClassifier.decode`. The J&W analyses
    on a Transformer (`az.jw_analyses`) need this variant (see config/README.md#az).
The output layer, `distribution` and `predict` are the shared head (`models.head`).
"""

import math
from dataclasses import dataclass

import torch
from torch import nn

from attnexp.data.batching import Batch
from attnexp.models.attention import masked_softmax
from attnexp.models.head import Encoded, Output, WidthHead
from attnexp.models.names import TRANSFORMER_ATTENTION, TRANSFORMER_ATTENTIONS, TRANSFORMER_ENCODER, TRANSFORMER_TIED_ATTENTION

ENCODER, ATTENTION, TIED_ATTENTION = TRANSFORMER_ENCODER, TRANSFORMER_ATTENTION, TRANSFORMER_TIED_ATTENTION


@dataclass(frozen=True)
class TransformerConfig:
    vocab_size: int
    n_classes: int
    task: str  # "bc", "qa" or "nli"
    encoder: str = ENCODER
    attention: str = ATTENTION  # "self" (standard blocks) or "tiedcls" (tied last-layer [CLS] row)
    n_layers: int = 6
    n_heads: int = 8
    width: int = 128
    dropout: float = 0.1
    max_length: int = 512


@dataclass
class TransformerEncoded(Encoded):
    """`hidden`: "tiedcls", the last layer's per-token values (already through the output projection);
    "self", the output of the last block at every position. `maps` (from `Encoded`): every layer's attention."""

    cls_input: torch.Tensor | None = None  # tiedcls: [B, D] residual stream at [CLS] entering the last layer
    cls_scores: torch.Tensor | None = None  # tiedcls: [B, heads, L] the last layer's [CLS] attention logits
    last_input: torch.Tensor | None = None  # self (with maps): [B, L, D] the residual stream entering the last block


class SelfAttention(nn.Module):
    def __init__(self, width: int, n_heads: int, dropout: float):
        super().__init__()
        if width % n_heads:
            raise ValueError(f"width {width} is not divisible by n_heads {n_heads}; change az.model")
        self.n_heads = n_heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.dropout = nn.Dropout(dropout)

    def heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries, keys and values [B, heads, L, D/heads]."""
        b, length, width = x.shape
        split = self.qkv(x).view(b, length, 3, self.n_heads, width // self.n_heads)
        q, k, v = split.permute(2, 0, 3, 1, 4)
        return q, k, v

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor, queries: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Outputs [B, Q, D] and weights [B, heads, Q, L] of the first `queries` positions (all by default)."""
        q, k, v = self.heads(x)
        q = q[:, :, :queries]
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        weights = torch.softmax(scores.masked_fill(~key_mask[:, None, None, :], float("-inf")), dim=-1)
        out = (self.dropout(weights) @ v).transpose(1, 2).reshape(x.shape[0], q.shape[2], x.shape[2])
        return self.proj(out), weights


class Block(nn.Module):
    def __init__(self, width: int, n_heads: int, dropout: float):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = SelfAttention(width, n_heads, dropout)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width), nn.Dropout(dropout))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor, queries: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """The block's states of the first `queries` positions (all by default), every position as key and value."""
        out, weights = self.attn(self.ln1(x), key_mask, queries)
        x = x[:, :queries] + self.dropout(out)
        return x + self.mlp(self.ln2(x)), weights


class TransformerClassifier(WidthHead):
    checkpoint_kind = "transformer"
    input_shift_invariant = True  # pre-LN blocks and a final LayerNorm: every path from `embed` meets a LayerNorm

    def __init__(self, config: TransformerConfig):
        super().__init__()
        if config.attention not in TRANSFORMER_ATTENTIONS:
            raise ValueError(f"unknown Transformer attention {config.attention!r}; choose one of {TRANSFORMER_ATTENTIONS}")
        self.config = config
        d = config.width
        self.embedding = nn.Embedding(config.vocab_size, d, padding_idx=0)
        self.position = nn.Embedding(config.max_length, d)
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(d, config.n_heads, config.dropout) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(d)
        if not self.is_binary:
            self.question_embedding = nn.Embedding(config.vocab_size, d, padding_idx=0)
            self.question_projection = nn.Linear(d, d)
        self.build_head(d)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    @property
    def tied(self) -> bool:
        """The last layer's [CLS] row is one head-averaged distribution over the words ("tiedcls")."""
        return self.config.attention == TIED_ATTENTION

    @staticmethod
    def input_lengths(batch: Batch) -> torch.Tensor:
        """Input positions per example [B]: [CLS] and the words, not the closing marker (masked out as a key)."""
        return batch.lengths - 1

    def key_mask(self, batch: Batch) -> torch.Tensor:
        """Keys every query may attend to: the input positions, not the closing marker nor padding [B, L]."""
        positions = torch.arange(batch.tokens.shape[1], device=batch.tokens.device)
        return positions[None, :] < self.input_lengths(batch)[:, None]

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """Input of the first block: token + position embeddings (A&Z's e_j)."""
        if tokens.shape[1] > self.config.max_length:
            raise ValueError(f"sequence length {tokens.shape[1]} exceeds az.model.max_length {self.config.max_length}")
        return self.embedding(tokens) + self.position(torch.arange(tokens.shape[1], device=tokens.device))

    def _question(self, batch: Batch) -> torch.Tensor | None:
        if self.is_binary:
            return None
        mask = (batch.question != 0)[..., None]
        bag = (self.question_embedding(batch.question) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return torch.tanh(self.question_projection(bag))

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None, maps: bool = True) -> TransformerEncoded:
        """Run the blocks ("tiedcls": all but the [CLS] row of the last); `embedded` replaces `embed`.

        `maps=False` is the path of the logits alone (`logits`): no attention maps are kept, and the last block
        computes the [CLS] query only, the one position the output reads (the standard variant's hidden is then
        [B, 1, D]). The same logits up to float rounding, with a sixth less work in a 6-layer model."""
        x = self.embed(batch.tokens) if embedded is None else embedded
        question = self._question(batch)
        if question is not None:
            x = torch.cat([x[:, :1] + question[:, None], x[:, 1:]], dim=1)
        x = self.dropout(x)
        key_mask = self.key_mask(batch)
        blocks = self.blocks if maps and not self.tied else self.blocks[:-1]
        layers, last_input = [], None
        for block in blocks:
            last_input = x
            x, weights = block(x, key_mask)
            layers.append(weights)
        if not self.tied:
            if maps:
                return TransformerEncoded(x, question, maps=torch.stack(layers, dim=1), last_input=last_input)
            cls, _ = self.blocks[-1](x, key_mask, queries=1)
            return TransformerEncoded(cls, question)
        last = self.blocks[-1]
        q, k, v = last.attn.heads(last.ln1(x))
        q = q if maps else q[:, :, :1]
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        values = v.transpose(1, 2).reshape(x.shape) @ last.attn.proj.weight.T
        encoded = TransformerEncoded(values, question, cls_input=x[:, 0], cls_scores=scores[:, :, 0])
        encoded.scores = self._log_attention(encoded.cls_scores, batch.real_mask)
        if not maps:
            return encoded
        full = torch.softmax(scores.masked_fill(~key_mask[:, None, None, :], float("-inf")), dim=-1)
        cls_row = self.attend(encoded, batch)[:, None, :].expand(-1, full.shape[1], -1)
        layers.append(torch.cat([cls_row[:, :, None], full[:, :, 1:]], dim=2))
        encoded.maps = torch.stack(layers, dim=1)
        return encoded

    def attend(self, encoded: TransformerEncoded, batch: Batch) -> torch.Tensor:
        """The last layer's [CLS] attention over the words, averaged over heads: [B, L]. "tiedcls": the
        distribution the model uses; "self": the heads' [CLS] rows averaged and renormalised over the words
        (a reading of the model, not a part of it)."""
        mask = batch.real_mask
        if self.tied:
            return masked_softmax(encoded.cls_scores, mask[:, None, :]).mean(dim=1)
        row = encoded.maps[:, -1, :, 0, :].mean(dim=1) * mask
        return row / row.sum(dim=-1, keepdim=True).clamp(min=1e-12)

    @staticmethod
    def _log_attention(cls_scores: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
        """The "tiedcls" scores [B, L] whose softmax over the words is `attend`'s head average, log((1/H) sum_h
        softmax_h), from every head's log-softmax, so none underflows; -inf off the words (`Encoded.scores`)."""
        logs = torch.log_softmax(cls_scores.masked_fill(~real[:, None, :], float("-inf")), dim=-1)
        logs = torch.logsumexp(logs, dim=1) - math.log(cls_scores.shape[1])
        return logs.masked_fill(~real, float("-inf"))  # an instance without words: no NaN, nothing to attend

    def decode(self, encoded: TransformerEncoded, attention: torch.Tensor, batch: Batch | None = None) -> torch.Tensor:
        """Logits from the [CLS] output of the last block for attention [B, L] (or [B, K, L]); "tiedcls" only."""
        if not self.tied:
            raise ValueError(
                "the standard Transformer (attention 'self') has no single [CLS] attention to swap: its heads "
                "attend separately; swapping analyses (J&W permutation, adversary) need the 'tiedcls' variant "
                "(transformer-tiedcls, trained when az.jw_analyses is true)"
            )
        last = self.blocks[-1]
        if attention.dim() == 2:
            context, cls = torch.einsum("bl,bld->bd", attention, encoded.hidden), encoded.cls_input
        else:
            context, cls = torch.einsum("bkl,bld->bkd", attention, encoded.hidden), encoded.cls_input[:, None, :]
        y = cls + last.dropout(context + last.attn.proj.bias)
        z = self.ln_f(y + last.mlp(last.ln2(y)))
        return self.output_logits(z, encoded.question, batch, several=attention.dim() == 3)

    def decode_erased(
        self, encoded: TransformerEncoded, erased: torch.Tensor, batch: Batch, attention: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits [B, K(, C)] with the positions `erased` [B, K, L] taken out of the last layer's [CLS] attention
        (Serrano & Smith), the states below fixed. "tiedcls": the head default (the one distribution erased and
        renormalised, as the softmax of its log-weights `Encoded.scores` with the erased masked). "self": every
        head's [CLS] row loses the same positions and is renormalised over the keys left ([CLS] included), i.e. the
        last block's [CLS] query with those keys masked: the softmax of its scores, so that it stays defined when
        the kept weights underflow."""
        if self.tied:
            return super().decode_erased(encoded, erased, batch, attention)
        last, x = self.blocks[-1], encoded.last_input
        queries, keys, values = last.attn.heads(last.ln1(x))  # [B, heads, L, D/heads]
        scores = (queries[:, :, :1] @ keys.transpose(-1, -2)).squeeze(2) / math.sqrt(queries.shape[-1])  # [B, heads, L]
        kept = masked_softmax(scores[:, None], self.key_mask(batch)[:, None, None, :] & ~erased[:, :, None, :])
        context = torch.einsum("bkhl,bhld->bkhd", kept, values).flatten(2)
        y = x[:, :1] + last.dropout(last.attn.proj(context))
        z = self.ln_f(y + last.mlp(last.ln2(y)))
        return self.output_logits(z, encoded.question, batch, several=True)

    def classify(self, encoded: TransformerEncoded, batch: Batch) -> torch.Tensor:
        """The model's own logits from its encoded states (either variant)."""
        if self.tied:
            return self.decode(encoded, self.attend(encoded, batch), batch)
        return self.output_logits(self.ln_f(encoded.hidden[:, 0]), encoded.question, batch, several=False)

    def logits(self, batch: Batch, embedded: torch.Tensor | None = None) -> torch.Tensor:
        """Logits of the batch without the attention maps (training, prediction, input gradients); `embedded`
        replaces `embed(batch.tokens)`."""
        return self.classify(self.encode(batch, embedded, maps=False), batch)

    def forward(self, batch: Batch) -> Output:
        encoded = self.encode(batch)
        return Output(self.classify(encoded, batch), self.attend(encoded, batch), encoded)

    def attention_maps(self, batch: Batch, embedded: torch.Tensor | None = None) -> torch.Tensor:
        """Per-layer, per-head attention [B, layers, heads, L, L]; rows are queries, padding keys get 0."""
        return self.encode(batch, embedded).maps

    def parameter_groups(self) -> dict[str, list[nn.Parameter]]:
        """No attention parameters of its own: the encoder gets everything below the head."""
        decoder = self.head_parameters()
        ids = {id(p) for p in decoder}
        return {"encoder": [p for p in self.parameters() if id(p) not in ids], "attention": [], "decoder": decoder}


def build_transformer(
    meta: dict,
    n_layers: int = 6,
    n_heads: int = 8,
    width: int = 128,
    dropout: float = 0.1,
    max_length: int = 512,
    attention: str = ATTENTION,
) -> TransformerClassifier:
    """A fresh Transformer; `attention` "self" (standard blocks) or "tiedcls" (tied last-layer [CLS] row)."""
    config = TransformerConfig(
        vocab_size=len(meta["vocab"]),
        n_classes=len(meta["classes"]),
        task=meta["task"],
        attention=attention,
        n_layers=n_layers,
        n_heads=n_heads,
        width=width,
        dropout=dropout,
        max_length=max_length,
    )
    return TransformerClassifier(config)
