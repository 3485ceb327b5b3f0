"""A language model prompted to classify, as an `AttentionModel`: a causal LM (`prompted`) or a masked LM
(`masked_lm`) given a template and a verbalizer (spec language-models.md §1).

The batch holds the text alone, as every model's instances do ([BOS]/[CLS] t_1 .. t_n [EOS]/[SEP]); the network
reads it inside the prompt: prefix + t_1 .. t_n + suffix, the prefix carrying the few-shot examples and the opening
special token, the suffix ending at the explained position q (a causal LM: the prompt's last token; a masked LM: its
[MASK]). The classes' scores are the LM's logits at q of the verbalizer words' first sub-tokens, so the class
distribution is the softmax over them. The rankable positions R are the text's; template tokens are never ranked,
erased, permuted or deleted, because every analysis works on the batch's positions and this class maps them to the
prompt's (`HFClassifier._framed` and the other frame hooks): batch position i in 1 .. n is prompt position p + i - 1
(p = the prefix's length). Everything else (the per-head rows at q, decoding from the last layer, masked-key erasure,
gradients at the token embeddings) is `HFClassifier`'s.
"""

from contextlib import contextmanager
from dataclasses import replace

import torch

from attnexp.data.batching import Batch
from attnexp.errors import ConfigError
from attnexp.models.hf.architectures import architecture_problem, sizes, with_padding
from attnexp.models.hf.classifier import HFClassifier, HFConfig
from attnexp.models.hf.prompts import Prompt, build_prompt, template_problem


class HFPrompted(HFClassifier):
    """An LM with a prompt and a verbalizer (module docstring); `config.kind` is "prompted" or "masked_lm"."""

    decode_query_alone = False  # its head reads q inside the prompt (`_reading_at`), not a sequence's first position

    def __init__(self, model, config, tokenizer, prompt: Prompt):
        self.prompt = prompt
        super().__init__(model, config, tokenizer)
        self.last_fed = self.embeddings  # a BERT's embedding module (positions, LayerNorm): what enters the layers
        self.embeddings = model.get_input_embeddings()  # token embeddings: a text token's do not depend on its place
        self.uses_token_types = False

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """The token embeddings [B, L, D] (positions are added inside, where the prompt puts the text)."""
        return self.embeddings(tokens)

    # --- the prompt's frame ---
    @property
    def _offset(self) -> int:
        return len(self.prompt.prefix)

    def query_positions(self, lengths: torch.Tensor) -> torch.Tensor:
        """q in the prompt [B] from the prompt's lengths: the last token (causal) or the [MASK] (masked LM)."""
        return lengths - len(self.prompt.suffix) + self.prompt.query

    def _text(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """Per prompt position, whether it holds a text token [B, L'] and the text's length n [B]."""
        n = batch.real_mask.sum(-1)
        width = self._offset + int(n.max()) + len(self.prompt.suffix)
        positions = torch.arange(width, device=batch.tokens.device)[None, :]
        return (positions >= self._offset) & (positions < self._offset + n[:, None]), n

    def _framed(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        text, n = self._text(batch)
        device = batch.tokens.device
        size, width = text.shape
        pad = self.model.config.pad_token_id or 0
        ids = torch.full((size, width), pad, dtype=torch.long, device=device)
        ids[:, : self._offset] = torch.tensor(self.prompt.prefix, dtype=torch.long, device=device)
        ids = torch.where(text, self._model_frame(batch.tokens[:, None], batch)[:, 0], ids)
        suffix = torch.tensor(self.prompt.suffix, dtype=torch.long, device=device)
        at = self._offset + n[:, None] + torch.arange(len(suffix), device=device)[None, :]
        ids = ids.scatter(1, at, suffix[None].expand(size, -1))
        return ids, self._offset + n + len(suffix)

    def _framed_embedded(self, embedded: torch.Tensor | None, batch: Batch) -> torch.Tensor | None:
        if embedded is None:
            return None
        ids, _ = self._framed(batch)
        template = self.embeddings(ids).detach()
        text, _ = self._text(batch)
        return torch.where(text[..., None], self._model_frame(embedded.transpose(1, 2), batch).transpose(1, 2), template)

    def _model_frame(self, values: torch.Tensor, batch: Batch) -> torch.Tensor:
        """[B, K, L] at batch positions 1 .. n -> [B, K, L'] at prompt positions p .. p + n - 1 (0 / False elsewhere)."""
        text, n = self._text(batch)
        width, real = text.shape[1], int(n.max())
        moved = values[..., 1 : 1 + real]
        zeros = lambda k: moved.new_zeros(*moved.shape[:-1], k)  # noqa: E731
        placed = torch.cat([zeros(self._offset), moved, zeros(width - self._offset - real)], -1)
        return torch.where(text[:, None] if values.dim() == 3 else text, placed, torch.zeros_like(placed))

    def _model_frame_index(self, index: torch.Tensor, batch: Batch) -> torch.Tensor:
        text, _ = self._text(batch)
        size, width = text.shape
        identity = torch.arange(width, device=index.device).expand(size, index.shape[1], width)
        moved = self._model_frame(index + self._offset - 1, batch)
        return torch.where(text[:, None], moved, identity)

    def _batch_frame(self, values: torch.Tensor, batch: Batch) -> torch.Tensor:
        """[B, ..., L'] -> [B, ..., L]: the text's values at 1 .. n, 0 elsewhere."""
        text, n = self._text(batch)
        text = text.view(text.shape[0], *[1] * (values.dim() - 2), text.shape[1]).to(values.device)
        real = int(n.max())
        out = values.new_zeros(*values.shape[:-1], batch.tokens.shape[1])
        out[..., 1 : 1 + real] = (values * text)[..., self._offset : self._offset + real]
        return out

    def _rankable(self, batch: Batch) -> torch.Tensor:
        return self._text(batch)[0]

    def relevance_frame(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The prompt's lengths and q [B] (A&Z read rollout and flow over the whole prompt)."""
        _, lengths = self._framed(batch)
        return lengths, self.query_positions(lengths)

    def relevance_to_batch(self, values: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Relevance [B, layers, L'] over the prompt as [B, layers, L] over the batch: the text's at 1 .. n, and at 0
        everything outside R (template and specials: the attention sink, which `sink_mass` reports)."""
        text = self._text(batch)[0][:, None, :].to(values.device)
        out = self._batch_frame(values, batch)
        out[..., 0] = (values * ~text).sum(-1)
        return out

    def input_lengths(self, batch: Batch) -> torch.Tensor:
        """[BOS]/[CLS] + the text: the closing marker of the batch is not read (the suffix is the prompt's)."""
        return batch.lengths - 1

    # --- the verbalizer's logits at q ---
    def _frame_positions(self, positions: torch.Tensor) -> torch.Tensor:
        """Batch positions as the prompt's: text position i at p + i - 1 (0, the batch's own [BOS], at p - 1)."""
        return positions + self._offset - 1

    @contextmanager
    def _reading_at(self, q: torch.Tensor):
        """The LM head runs on the state at q [B] alone (a pre-hook) and keeps the verbalizer's sub-tokens."""
        head = self.model.get_output_embeddings()
        classes = torch.tensor(self.prompt.classes, dtype=torch.long)
        kept = {}

        def narrow(module, args):
            hidden = args[0]
            return (hidden[torch.arange(hidden.shape[0], device=hidden.device), q.to(hidden.device)][:, None],)

        def keep(module, args, output):
            kept["logits"] = output[:, 0, classes.to(output.device)]

        handles = [head.register_forward_pre_hook(narrow), head.register_forward_hook(keep)]
        try:
            yield kept
        finally:
            for handle in handles:
                handle.remove()

    def parameter_groups(self) -> dict[str, list]:
        return {"encoder": list(self.model.parameters()), "attention": [], "decoder": []}


# --- loading ---

LOADERS = {"prompted": "AutoModelForCausalLM", "masked_lm": "AutoModelForMaskedLM"}


def load_prompted(
    checkpoint: str,
    *,
    kind: str,
    template: str,
    words: list[str],
    task: str,
    few_shot: list[tuple[str, str]] = (),
    allow_download: bool = False,
    gguf_file: str | None = None,
) -> HFPrompted:
    """The LM of `checkpoint` (a directory, a cached hub name, or its `gguf_file`) with its tokenizer, prompted with
    `template` and the class `words` (in class order)."""
    import transformers

    from attnexp.models.hf.checkpoints import checkpoint_problem

    problem = checkpoint_problem(checkpoint, allow_download, gguf_file)  # the template: `wrap_prompted` checks it
    if problem:
        raise ConfigError(f"hf checkpoint {checkpoint!r}: {problem}")
    local, gguf = not allow_download, ({} if gguf_file is None else {"gguf_file": gguf_file})
    tokenizer = transformers.AutoTokenizer.from_pretrained(checkpoint, local_files_only=local, **gguf)
    options = dict(gguf)
    if gguf_file is not None:
        options |= {"dtype": torch.float32, "quantization_config": transformers.GgufConfig(dequantize=True)}
    model = getattr(transformers, LOADERS[kind]).from_pretrained(checkpoint, local_files_only=local, **options)
    wrapped = wrap_prompted(model, tokenizer, template, words, task=task, few_shot=few_shot, checkpoint=checkpoint)
    wrapped.config = replace(wrapped.config, gguf_file=gguf_file)
    return wrapped


def wrap_prompted(
    model,
    tokenizer,
    template: str,
    words: list[str],
    *,
    task: str | None = None,
    few_shot: list[tuple[str, str]] = (),
    checkpoint: str = "",
) -> HFPrompted:
    """An in-memory LM (a transformers causal LM: `prompted`; a masked LM: `masked_lm`, told by its template's
    {mask}) prompted with `template` and the class `words` (in class order); `task` defaults to "bc" for two words,
    else "nli" (C classes, softmax)."""
    kind = "masked_lm" if "{mask}" in template else "prompted"
    task = task or ("bc" if len(words) == 2 else "nli")
    problem = template_problem(kind, template, dict(enumerate(words)))
    hf = model.config
    problem = problem or architecture_problem(kind, hf.model_type)
    if problem:
        raise ConfigError(f"{type(model).__name__}: {problem}")
    if kind == "prompted":
        with_padding(model, tokenizer)
    layers, heads, width = sizes(hf)
    config = HFConfig(
        checkpoint=str(checkpoint or getattr(hf, "_name_or_path", "")),
        task=task,
        n_classes=len(words),
        n_layers=layers,
        n_heads=heads,
        width=width,
        vocab_size=int(hf.vocab_size),
        model_type=hf.model_type,
        causal=kind == "prompted",
        hf_config=hf.to_dict(),
        kind=kind,
        prompt=template,
        verbalizer=tuple(words),
        few_shot=tuple(tuple(pair) for pair in few_shot),
    )
    prompt = build_prompt(tokenizer, kind, template, list(words), config.few_shot)
    return HFPrompted(model.eval(), config, tokenizer, prompt).eval()


def reload_prompted(config) -> HFPrompted:
    """A saved prompted model, from its source checkpoint (it is never fine-tuned: no weights are saved)."""
    return load_prompted(
        config.checkpoint,
        kind=config.kind,
        template=config.prompt,
        words=list(config.verbalizer),
        task=config.task,
        few_shot=[tuple(pair) for pair in config.few_shot],
        gguf_file=config.gguf_file,
    )
