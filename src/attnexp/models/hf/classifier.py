"""Any Hugging Face encoder (`AutoModelForSequenceClassification` + its tokenizer) as an `AttentionModel`.

The wrapper leaves the network as it is: its logits, every layer's attention (`encoded.maps`, [B, layers,
heads, L, L]) and its gradients are the checkpoint's own. Instances are token ids of the model's own
tokenizer ([CLS] ... [SEP], as `hf_instances` writes them), so `Batch`'s convention holds: position 0 is
[CLS], position length-1 the closing [SEP], real tokens lie between.

The J&W split embed -> encode -> attend -> decode:
  - `embed`: the output of the model's embedding module (token + position (+ type) embeddings, LayerNorm),
    A&Z's e_j; `encode(batch, embedded)` feeds it in through a forward hook on that module;
  - `attend`: the last layer's [CLS] attention over the real tokens, averaged over heads, renormalised;
  - `decode(encoded, a)`: the logits when the last layer's [CLS] query uses attention `a` instead: each
    head's weights on the real tokens are rescaled by a / attend(encoded) (each head keeps its own mass
    on [CLS]/[SEP]), so `decode(encoded, attend(encoded))` is the model's own output, gradients
    included. The per-head rows are differentiated only when `a` carries a gradient (a detached `a`
    holds the attention fixed, as J&W's gradient importance asks);
  - `decode_permuted(encoded, index, batch)`: every head's [CLS] row permuted by the same index (the J&W
    permutation test on a multi-head model), instead of the head's default of permuting `attend`'s average.
Swapping the last layer's [CLS] rows changes nothing below the last layer, so the decodes (the permutation test,
the first-flip and single-weight erasure) run only the last layer and the head again, from the states that entered
the last layer in `encode` (`full_rerun = True` reruns every layer, the reference the tests compare with).
It also overrides the head's `blank_id` ([MASK], else [UNK]) and `tokenizer` (the checkpoint's own).
The [CLS] row is swapped inside a registered attention function (transformers' `AttentionInterface`,
eager maths), so any model whose self-attention dispatches through that interface works (BERT,
DistilBERT, RoBERTa, ...). J&W's adversarial attention needs one attention vector that *is* the
model's; the per-head rescaling is not that, so the workflow runs the adversary only on our own models.
"""

from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import torch
from torch import nn

from attnexp.data.batching import Batch
from attnexp.errors import ConfigError
from attnexp.models.head import Encoded, Output, WidthHead
from attnexp.models.hf.architectures import FED_STRAIGHT
from attnexp.models.hf.attention import _RECORDER, ATTENTION_IMPLEMENTATION, _register
from attnexp.models.interface import PrefixScorer
from attnexp.models.names import HF_ENCODER

MAX_DECODE_ROWS = 256  # sequences per forward pass when decoding many candidate attentions


@dataclass(frozen=True)
class HFConfig:
    """What the analyses read (`task`, `n_classes`, `n_layers`, `n_heads`, `width`) and how to rebuild the model."""

    checkpoint: str  # the name or directory it was loaded from
    task: str  # "bc", "qa" or "nli"
    n_classes: int
    n_layers: int
    n_heads: int
    width: int
    vocab_size: int
    model_type: str = ""
    finetuned: bool = False
    causal: bool = False  # a decoder-only LM's classifier: explained at its last token (the one its head reads)
    encoder: str = HF_ENCODER
    attention: str = "self"
    hf_config: dict = field(default_factory=dict)  # the transformers config (to rebuild fine-tuned weights)
    gguf_file: str | None = None  # the GGUF file of `checkpoint` the weights were read from (dequantized to float32)
    kind: str = "classifier"  # or "prompted" / "masked_lm": an LM with `prompt` and `verbalizer` (models.hf.prompted)
    prompt: str | None = None  # the template, with {text} (and {mask} for a masked LM)
    verbalizer: tuple = ()  # the class words, in class order
    few_shot: tuple = ()  # (text, word) examples prepended to the prompt


@dataclass
class HFEncoded(Encoded):
    """`hidden`: last-layer states; `maps`: every layer's attention; `cls_rows`: last layer's [CLS] rows [B, H, L]."""

    cls_rows: torch.Tensor | None = None
    embedded: torch.Tensor | None = None  # the embedding-module output fed in (None: the model's own)
    logits: torch.Tensor | None = None  # the model's own logits in our convention
    last_input: torch.Tensor | None = None  # the states that enter the last layer [B, L, D] (decoding from there)
    last_value: torch.Tensor | None = None  # the last layer's values [B, H, L, D] (decoding its q alone)


def _check_task(task: str, n_labels: int, n_classes: int, where: str) -> None:
    if task == "bc" and n_labels not in (1, 2):
        raise ConfigError(f"{where}: a binary (bc) dataset needs a model with 1 or 2 labels, it has {n_labels}")
    if task != "bc" and n_labels != n_classes:
        raise ConfigError(f"{where}: the dataset has {n_classes} classes but the model {n_labels} labels")


class HFClassifier(WidthHead):
    """An `AttentionModel` around a `transformers` sequence classifier (see the module docstring)."""

    checkpoint_kind = "hf"
    tied = False  # its heads attend separately: no single attention vector to differentiate or swap (erasure.swappable)

    def __init__(self, model: nn.Module, config: HFConfig, tokenizer=None):
        super().__init__()
        self.config = config
        self.model = model
        self.tokenizer = tokenizer
        _register()
        model.set_attn_implementation(ATTENTION_IMPLEMENTATION)
        base = model.base_model
        if config.causal:  # a decoder: its token embedding module (positions enter inside the stack or its layers)
            self.embeddings = model.get_input_embeddings()
        elif hasattr(base, "embeddings"):
            self.embeddings = base.embeddings  # BERT-family: the embedding module's output, LayerNorm included
        else:
            raise TypeError(f"{type(model).__name__}: no `embeddings` module on its base model; not a BERT-like encoder")
        self._last_attention = None
        hf = model.config
        self.sep_id = getattr(tokenizer, "sep_token_id", None) if tokenizer is not None else None
        self.blank_id = _blank_id(tokenizer, hf)  # A&Z blank-out: [MASK] for BERT-family models
        self.uses_token_types = getattr(hf, "type_vocab_size", 0) > 1 and not config.causal
        self._layers = _layer_stack(base, config.n_layers)  # (parent, attribute, ModuleList), or None
        self.last_fed = self.embeddings  # the module whose output is the last layer's input when it runs alone
        # decode by rerunning every layer (a reference; or no stack found; or the fed module's output does not enter
        # the stack as it is, e.g. GPT-2 adds its position embeddings after it)
        self.full_rerun = self._layers is None or config.model_type not in FED_STRAIGHT

    # --- the AttentionModel protocol ---
    # a layer's transient states at once (residual, q/k/v, the MLP's three intermediate-wide ones): measured, a
    # SmolLM-shaped Llama's leave-one-out peaked at 2.7 GiB with 8 widths and 1.3 GiB with a quarter of the chunk
    forward_widths = 32

    @property
    def activation_widths(self) -> int:
        """Every layer keeps ~16 widths a token for backward (states, q/k/v, attention output, the MLP's)."""
        return 16 * self.config.n_layers

    def _token_types(self, tokens: torch.Tensor) -> torch.Tensor | None:
        """Segment ids of packed pairs: 1 after the first [SEP] (BERT); None for models without them."""
        if not self.uses_token_types or self.sep_id is None:
            return None
        sep = (tokens == self.sep_id).long()
        return ((sep.cumsum(1) - sep) > 0).long()

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """The embedding module's output [B, L, D] (A&Z's e_j for BERT-family models; a decoder's token embeddings)."""
        if self.config.causal:
            return self.embeddings(tokens)
        types = self._token_types(tokens)
        return self.embeddings(input_ids=tokens, **({"token_type_ids": types} if types is not None else {}))

    @contextmanager
    def _feeding(self, embedded: torch.Tensor | None, module: nn.Module | None = None):
        """`embedded` in place of `module`'s output (default: the embedding module `embed` reads)."""
        handle = None
        if embedded is not None:
            handle = (module or self.embeddings).register_forward_hook(lambda module, args, output: embedded)
        try:
            yield
        finally:
            if handle is not None:
                handle.remove()

    def query_positions(self, lengths: torch.Tensor) -> torch.Tensor:
        """The explained position q of each sequence [B]: [CLS] (0) for an encoder, the last token for a decoder."""
        return lengths - 1 if self.config.causal else torch.zeros_like(lengths)

    # --- the model's frame: the sequence it reads, against the batch's ([CLS]/[BOS] text [SEP]/[EOS]) ---
    # A classifier reads the batch as it is; a prompted LM (`models.hf.prompted`) reads the text inside its prompt,
    # so its maps, rows and q live in the prompt's positions and these map them to the batch's and back.

    def _framed(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The token ids [B, L'] and lengths [B] the network reads."""
        return batch.tokens, batch.lengths

    def _framed_embedded(self, embedded: torch.Tensor | None, batch: Batch) -> torch.Tensor | None:
        """`embed(batch.tokens)`-shaped inputs [B, L, D] placed where the network reads them."""
        return embedded

    def _model_frame(self, values: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Values [B, K, L] over the batch's positions placed at the network's [B, K, L'] (0 / False elsewhere)."""
        return values

    def _model_frame_index(self, index: torch.Tensor, batch: Batch) -> torch.Tensor:
        """A permutation index [B, P, L] of the batch's positions as one of the network's [B, P, L']."""
        return index

    def _batch_frame(self, values: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Values [B, L'] over the network's positions read at the batch's [B, L] (the rankable ones)."""
        return values

    def _rankable(self, batch: Batch) -> torch.Tensor:
        """The rankable positions R in the network's frame [B, L'] (bool)."""
        return batch.real_mask

    def _reading_head(self, lengths: torch.Tensor):
        """The logits at each sequence's q (None: the model's own, an encoder's pooled [CLS])."""
        return self._reading_at(self.query_positions(lengths))

    @contextmanager
    def _reading_at(self, q: torch.Tensor):
        """A decoder's logits at the positions `q` [B] of its input: its classification head (`score`) runs on every
        position; the hook keeps the row at q, whatever the model's own pooling makes of its padding."""
        if not self.config.causal:
            yield None
            return
        kept = {}

        def keep(module, args, output):
            kept["logits"] = output[torch.arange(output.shape[0], device=output.device), q]

        handle = self.model.score.register_forward_hook(keep)
        try:
            yield kept
        finally:
            handle.remove()

    def _run(
        self,
        tokens: torch.Tensor,
        lengths: torch.Tensor,
        embedded: torch.Tensor | None,
        attentions: bool,
        fed=None,
        cache: bool = False,
    ):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        mask = (positions[None, :] < lengths[:, None]).long()
        types = self._token_types(tokens)
        extra = {"token_type_ids": types} if types is not None else {}
        if self.config.causal:
            extra["use_cache"] = cache  # `cache`: keep the keys and values (`_prefix_scorer`); a decoder's default keeps them
        with self._feeding(embedded, fed), self._reading_head(lengths) as head:
            out = self.model(
                input_ids=tokens, attention_mask=mask, output_attentions=attentions, output_hidden_states=attentions, **extra
            )
        if head is not None:
            out.logits = head["logits"]
        return out

    def _logits(self, raw: torch.Tensor, batch: Batch | None) -> torch.Tensor:
        """Our convention: BC one logit (log-odds of class 1), otherwise C logits with non-candidates at -inf."""
        if self.is_binary:
            return raw[..., 1] - raw[..., 0] if raw.shape[-1] == 2 else raw[..., 0]
        if batch is not None and batch.candidates is not None:
            mask = batch.candidates if raw.dim() == 2 else batch.candidates[:, None, :]
            raw = raw.masked_fill(~mask, float("-inf"))
        return raw

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None) -> HFEncoded:
        """One pass with every layer's attention; `embedded` replaces the embedding module's output."""
        _RECORDER["seen"] = []
        tokens, lengths = self._framed(batch)
        fed = self._framed_embedded(embedded, batch)
        try:
            out = self._run(tokens, lengths, fed, attentions=True)
            seen, value = _RECORDER["seen"], _RECORDER.get("value")
        finally:
            _RECORDER.pop("seen", None)
            _RECORDER.pop("value", None)
        if not seen:
            raise TypeError(
                f"{type(self.model).__name__} does not dispatch its attention through transformers' AttentionInterface"
            )
        self._last_attention = seen[-1]
        maps = torch.stack(out.attentions, dim=1)
        padding = torch.arange(tokens.shape[1], device=tokens.device)[None, :] < lengths[:, None]
        maps = maps * padding[:, None, None, None, :]
        states = getattr(out, "hidden_states", None)
        hidden = states[-1] if states else maps.new_zeros(0)
        return HFEncoded(
            hidden=hidden,
            question=None,
            maps=maps,
            cls_rows=maps[torch.arange(batch.size, device=maps.device), -1, :, self.query_positions(lengths)],
            embedded=fed,
            logits=self._logits(out.logits, batch),
            last_input=states[-2] if states and len(states) >= 2 else None,
            last_value=value,
        )

    def attend(self, encoded: HFEncoded, batch: Batch) -> torch.Tensor:
        """The last layer's [CLS] attention averaged over heads, on the real tokens, renormalised: [B, L]."""
        mean = self._batch_frame(encoded.cls_rows.mean(dim=1), batch) * batch.real_mask
        return mean / mean.sum(-1, keepdim=True).clamp(min=1e-12)

    @contextmanager
    def _last_layer_only(self):
        """The layer stack cut to its last layer while a pass is fed that layer's input (through the embeddings
        hook): swapping the last layer's [CLS] rows changes nothing below it, so the other layers need not rerun."""
        parent, name, layers = self._layers
        setattr(parent, name, nn.ModuleList([layers[-1]]))
        try:
            yield
        finally:
            setattr(parent, name, layers)

    # decode an encoder's last layer at q alone (`_decode_rows`); False: the last layer over every position (the
    # reference the tests compare with). A prompted masked LM reads its [MASK] through its own head: False there.
    decode_query_alone = True

    def _decode_rows(self, encoded: HFEncoded, rows: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Logits [B, K(, C)] with the last layer's [CLS] rows replaced by `rows` [B, K, H, L]: the last layer and
        the head run again from the states that entered the last layer in `encode`. The whole model reruns with
        `full_rerun`, or when those states carry a graph (an `encode` under autograd, whose decodes may each be
        differentiated back to the inputs: a rerun keeps their graphs apart)."""
        size, k = rows.shape[:2]
        index = torch.arange(size, device=rows.device).repeat_interleave(k)
        tokens, lengths = self._framed(batch)
        tokens, lengths = tokens[index], lengths[index]
        kept = encoded.last_input
        from_last = not self.full_rerun and kept is not None and not kept.requires_grad
        # an encoder's head reads q alone, and every step of a layer after its attention is per position: the last
        # layer then runs on q alone, its attention output the rows over the values `encode` kept (one matmul)
        alone = from_last and self.decode_query_alone and not self.config.causal and encoded.last_value is not None
        fed = encoded.last_input if from_last else encoded.embedded  # gathered a part at a time: [B K, L, D] is large
        flat = rows.reshape(size * k, *rows.shape[2:])
        query = self.query_positions(lengths)
        logits = []
        if alone:  # every row's attention output at once: [B, H, K, L] over its instance's values [B, H, L, D]
            values = encoded.last_value
            mixed = torch.matmul(rows.transpose(1, 2).to(values.dtype), values)  # [B, H, K, D]
            mixed = mixed.transpose(1, 2).reshape(size * k, 1, values.shape[1], values.shape[-1])
        for start in range(0, size * k, MAX_DECODE_ROWS):
            part = slice(start, start + MAX_DECODE_ROWS)
            attention = self._last_attention
            attention._attnexp_cls_rows = flat[part]
            attention._attnexp_query = query[part]
            sequences, lengths_part = tokens[part], lengths[part]
            if alone:  # q's token, state and attention output alone: a sequence of one
                attention._attnexp_output = mixed[part]
                sequences = sequences.gather(1, query[part, None])
                inputs, lengths_part = kept[index[part], query[part]][:, None], torch.ones_like(lengths_part)
            else:
                inputs = None if fed is None else fed[index[part]]
            try:
                with self._last_layer_only() if from_last else nullcontext():
                    raw = self._run(sequences, lengths_part, inputs, False, self.last_fed if from_last else None).logits
            finally:
                attention._attnexp_cls_rows = attention._attnexp_output = None
            logits.append(raw)
        raw = torch.cat(logits).view(size, k, -1)
        return self._logits(raw, batch)

    def decode(self, encoded: HFEncoded, attention: torch.Tensor, batch: Batch | None = None) -> torch.Tensor:
        """Logits for a [CLS] attention [B, L] (or [B, K, L]): every head's real-token weights rescaled by
        attention / attend(encoded), each head keeping its mass on the real tokens (module docstring)."""
        if batch is None:
            raise ValueError("HFClassifier.decode needs the batch (it re-runs the model)")
        several = attention.dim() == 3
        candidates = self._model_frame(attention if several else attention[:, None, :], batch)
        rows = encoded.cls_rows if attention.requires_grad else encoded.cls_rows.detach()
        rankable = self._rankable(batch)
        real = rankable[:, None, None, :]
        own = (rows.mean(dim=1) * rankable)[:, None, None, :]
        own = own / own.sum(-1, keepdim=True).clamp(min=1e-12)
        ratio = torch.where(own > 0, candidates[:, :, None, :] / own.clamp(min=1e-30), torch.zeros_like(own))
        scaled = rows[:, None] * ratio * real
        mass = (rows * real[:, 0]).sum(-1, keepdim=True)[:, None]
        new = scaled / scaled.sum(-1, keepdim=True).clamp(min=1e-30) * mass + rows[:, None] * ~real
        logits = self._decode_rows(encoded, new, batch)
        return logits if several else logits[:, 0]

    def decode_erased(
        self, encoded: HFEncoded, erased: torch.Tensor, batch: Batch, attention: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits [B, K(, C)] with the items `erased` [B, K, L] (bool) masked out of every head's last-layer row q and
        each row renormalised over every key it keeps, specials included: the masked-key semantics of every multi-head
        model (as `transformer-self`; issue 37), equal to the softmax of the row's scores with those keys masked."""
        rows = encoded.cls_rows.detach()[:, None]  # [B, 1, H, L]
        kept = rows * ~self._model_frame(erased, batch)[:, :, None, :]
        new = kept / kept.sum(-1, keepdim=True).clamp(min=1e-30)
        return self._decode_rows(encoded, new, batch)

    def decode_permuted(
        self, encoded: HFEncoded, index: torch.Tensor, batch: Batch, attention: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits [B, P(, C)] with every head's last-layer [CLS] row permuted by `index` [B, P, L]
        (entry [b, p, t]: the position whose weight moves to t); the head average `attention` is not used."""
        rows = encoded.cls_rows.detach()
        heads = rows.shape[1]
        index = self._model_frame_index(index, batch)
        permuted = rows[:, None].expand(-1, index.shape[1], -1, -1).gather(-1, index[:, :, None, :].expand(-1, -1, heads, -1))
        return self._decode_rows(encoded, permuted, batch)

    def forward(self, batch: Batch) -> Output:
        encoded = self.encode(batch)
        return Output(encoded.logits, self.attend(encoded, batch), encoded)

    # the network's own logits in one pass, without maps or kept states: `decode(encode(batch, embedded), attend)`
    # is the same function with the same gradient (its rows are rescaled by a / attend = 1), in two passes
    single_pass_gradients = True

    def logits(self, batch: Batch, embedded: torch.Tensor | None = None) -> torch.Tensor:
        """The logits alone, in one pass of the network without attention weights, through transformers' fused
        `sdpa` attention where the model has it (equal to the eager maths to float rounding); `embedded` replaces
        `embed`'s output."""
        tokens, lengths = self._framed(batch)
        with self._fused_attention():
            raw = self._run(tokens, lengths, self._framed_embedded(embedded, batch), attentions=False).logits
        return self._logits(raw, batch)

    def fixed_attention_logits(self, batch: Batch, embedded: torch.Tensor) -> torch.Tensor:
        """The logits over `embedded` with every head's last-layer row at q held fixed, in one pass without maps or
        kept states: the attention function detaches those rows (`_attnexp_hold_query`). The head's default,
        `decode(encode(batch, embedded), attend(...).detach())`, is the same function and gradient in two passes."""
        attention = self._explained_attention(batch)
        tokens, lengths = self._framed(batch)
        attention._attnexp_hold_query = self.query_positions(lengths)
        try:
            raw = self._run(tokens, lengths, self._framed_embedded(embedded, batch), attentions=False).logits
        finally:
            attention._attnexp_hold_query = None
        return self._logits(raw, batch)

    def _explained_attention(self, batch: Batch) -> nn.Module:
        """The last layer's attention module (the one whose rows at q the analyses swap), found by `encode`'s recorder
        on the batch's first instance if no `encode` has run yet."""
        if self._last_attention is None:
            with torch.no_grad():
                self.encode(batch.select(slice(0, 1)))
        return self._last_attention

    @contextmanager
    def _fused_attention(self):
        """transformers' `sdpa` attention while no weight is read or replaced; our eager function again after."""
        try:
            self.model.set_attn_implementation("sdpa")
        except (ValueError, ImportError):  # an architecture without it: the eager maths
            yield
            return
        try:
            yield
        finally:
            self.model.set_attn_implementation(ATTENTION_IMPLEMENTATION)

    # a causal model's variants (deletions, blanks) run from their first changed position on, over the keys and values
    # of the unchanged prefix (`_prefix_scorer`); False: every variant runs whole (the reference the tests compare with)
    reuse_prefix = True

    def deletion_logits(self, batch: Batch):
        """Leave-one-out's scorer: the network on the deletions without maps, a causal one from each deleted position
        on (`variant_logits`)."""
        return self.variant_logits(batch)

    def variant_logits(self, batch: Batch, memory_budget_mb: float = 256.0):
        """The network on variants of `batch`'s instances without maps: a causal one (a decoder whose layers all keep
        a plain cache) over the keys and values of the prefix each variant shares with its instance (a
        `PrefixScorer`), any other whole."""
        if self.config.causal and self.reuse_prefix:
            scorer = self._prefix_scorer(batch, memory_budget_mb)
            if scorer is not None:
                return scorer
        return lambda variants, instance, first: self.logits(variants)

    def _frame_positions(self, positions: torch.Tensor) -> torch.Tensor:
        """Batch positions [V] as the network's (a classifier reads the batch as it is)."""
        return positions

    def _prefix_scorer(self, batch: Batch, memory_budget_mb: float) -> PrefixScorer | None:
        """One pass of `batch` keeping every layer's keys and values; a variant then runs only from its first changed
        position c on, position ids c.., attending to its instance's cached keys before c (a 2-D mask hides the cached
        keys from c on, so variants of different c share a pass; the cached keys a pass gathers stay within
        `memory_budget_mb`, in parts). None where the cache is not a plain one per layer
        (sliding windows, hybrids): those run whole."""
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer

        tokens, lengths = self._framed(batch)
        with torch.no_grad(), self._fused_attention():
            out = self._run(tokens, lengths, None, attentions=False, cache=True)
        cache = out.past_key_values
        layers = getattr(cache, "layers", None)
        if not layers or any(type(layer) is not DynamicLayer for layer in layers):
            return None
        kept = [(layer.keys, layer.values) for layer in layers]
        pad = self.model.config.pad_token_id or 0

        per_token = sum(4 * (k[0].numel() + v[0].numel()) // max(1, k.shape[2]) for k, v in kept)  # bytes of a past token

        def logits(variants: Batch, instance: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
            ids, own = self._framed(variants)
            rows = max(1, int(memory_budget_mb * 2**20 // (per_token * max(1, ids.shape[1]))))
            if variants.size > rows:
                parts = [slice(start, start + rows) for start in range(0, variants.size, rows)]
                return torch.cat([logits(variants.select(part), instance[part], first[part]) for part in parts])
            q = self.query_positions(own)
            cut = torch.minimum(self._frame_positions(first.to(q.device)).clamp(min=0), q)  # q itself always runs
            past = int(cut.max())
            span = int((own - cut).max())
            columns = cut[:, None] + torch.arange(span, device=ids.device)[None, :]
            inside = columns < own[:, None]
            suffix = ids.gather(1, columns.clamp(max=ids.shape[1] - 1)).masked_fill(~inside, pad)
            seen = torch.arange(past, device=ids.device)[None, :] < cut[:, None]
            prefix = DynamicCache([(k[instance, :, :past], v[instance, :, :past]) for k, v in kept])
            with self._fused_attention(), self._reading_at(q - cut) as head:
                self.model(
                    input_ids=suffix,
                    attention_mask=torch.cat([seen, inside], 1).long(),
                    position_ids=columns,
                    past_key_values=prefix,
                    use_cache=True,
                )
            return self._logits(head["logits"], variants)

        return PrefixScorer(logits, own=self._logits(out.logits, batch))

    def attention_maps(self, batch: Batch, embedded: torch.Tensor | None = None) -> torch.Tensor:
        """Per-layer, per-head attention [B, layers, heads, L, L]; rows are queries, padding keys get 0."""
        return self.encode(batch, embedded).maps

    def parameter_groups(self) -> dict[str, list[nn.Parameter]]:
        """The base model is the encoder; everything else (pooler-free heads, classifier) the decoder."""
        encoder = list(self.model.base_model.parameters())
        ids = {id(p) for p in encoder}
        return {"encoder": encoder, "attention": [], "decoder": [p for p in self.model.parameters() if id(p) not in ids]}

    def head_parameters(self) -> list[nn.Parameter]:
        return self.parameter_groups()["decoder"]


def _layer_stack(base: nn.Module, n_layers: int) -> tuple[nn.Module, str, nn.ModuleList] | None:
    """Where the base model keeps its `n_layers` transformer layers (BERT, RoBERTa: encoder.layer; DistilBERT:
    transformer.layer): (parent module, attribute name, the ModuleList); None if no such list is found."""
    for parent in base.modules():
        for name, child in parent.named_children():
            if isinstance(child, nn.ModuleList) and len(child) == n_layers:
                return parent, name, child
    return None


def _blank_id(tokenizer, hf_config) -> int:
    for name in ("mask_token_id", "unk_token_id"):
        value = getattr(tokenizer, name, None) if tokenizer is not None else None
        if value is not None:
            return int(value)
    return int(getattr(hf_config, "pad_token_id", 0) or 0)
