"""A&Z Fig. 4, the pronoun examples (spec abnar-zuidema.md §2.4, language-models.md §4): which candidate a language
model puts at a pronoun's place, and raw attention, rollout and flow from that place over every token at every layer.

- A masked LM reads the sentence with [MASK] replaced by its own mask token; q is the mask's position and each
  candidate is scored by its first sub-token at the mask.
- A causal LM cannot see a mask: it reads the text before [MASK] only (the rest is dropped), q is the last token
  it read (the one before the pronoun), and each candidate is scored as the next token (its first sub-token after
  that text, with the leading space a BPE or SentencePiece tokenizer folds into it).

The bars are p(c) / Σ_c' p(c') over the candidates, i.e. a softmax over the candidates' logits at q. The maps are
the A&Z analyses' (§3): heads averaged, raw W_l[q, :], rollout of Â = 0.5·W + 0.5·I (W itself with
`rollout_residual=False`), flow on Â; on a causal model every row is a distribution over positions <= q.
Every token is kept, the specials included, as the paper's figure shows them.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.az import METHODS

MASK = "[MASK]"  # how a config sentence marks the pronoun's place (replaced by the tokenizer's own mask token)
CANDIDATE = "candidate"  # the `method` of the table's candidate rows
DISPLAY_PREFIXES = ("Ġ", "▁")  # a BPE / SentencePiece word start, dropped from the shown tokens


@dataclass(frozen=True)
class PronounExample:
    """One sentence of `az.pronoun_examples`: [MASK] once, the candidate words scored there and the referents
    (the words the candidates may refer to) marked in the maps."""

    name: str
    sentence: str
    candidates: tuple[str, ...]
    referents: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidates", tuple(self.candidates))
        object.__setattr__(self, "referents", tuple(self.referents))
        if self.sentence.count(MASK) != 1:
            raise ValueError(f"pronoun example {self.name!r}: the sentence must hold {MASK} exactly once: {self.sentence!r}")
        if len(self.candidates) < 2 or len(set(self.candidates)) != len(self.candidates):
            raise ValueError(f"pronoun example {self.name!r}: give two or more different candidates, not {self.candidates}")

    @property
    def prefix(self) -> str:
        """The text before [MASK], trailing spaces removed: what a causal LM reads."""
        return self.sentence[: self.sentence.index(MASK)].rstrip()


@dataclass(frozen=True)
class PronounReading:
    """What one model makes of one example: the tokens it read, q, the candidates' scores and the relevance maps."""

    example: PronounExample
    causal: bool
    text: str  # the text the model read (mask token in place, or the prefix alone)
    tokens: tuple[str, ...]  # the tokenizer's pieces, specials included
    query: int  # q
    referents: dict  # referent word -> its token positions (empty where the text read lacks it)
    pieces: tuple[str, ...]  # each candidate's first sub-token, as the tokenizer writes it
    n_pieces: tuple[int, ...]  # each candidate's sub-token count in the filled sentence
    logits: np.ndarray  # [C] at q
    relative: np.ndarray  # [C] p(c) / Σ p(candidates): softmax over `logits`
    vocabulary: np.ndarray  # [C] p(c) over the whole vocabulary
    relevance: dict  # method -> [layers, n]


def display_token(piece: str) -> str:
    """A tokenizer piece as a figure shows it: without a BPE / SentencePiece word-start mark."""
    for mark in DISPLAY_PREFIXES:
        if piece.startswith(mark) and len(piece) > len(mark):
            return piece[len(mark) :]
    return piece


def _trailing_specials(ids: Sequence[int], special: set[int]) -> int:
    """How many special tokens close `ids` (an [EOS] a tokenizer appends)."""
    count = 0
    while count < len(ids) and ids[len(ids) - 1 - count] in special:
        count += 1
    return count


def _word_span(text: str, word: str) -> tuple[int, int] | None:
    """The first whole-word occurrence of `word` in `text` (any case), as a character span."""
    found = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, flags=re.IGNORECASE)
    return None if found is None else found.span()


def _referent_positions(tokenizer, text: str, ids: list[int], offsets, words: Sequence[str]) -> dict:
    """Referent word -> the positions of the tokens covering it in `text` (by the fast tokenizer's character offsets;
    without them, the tokens whose shown form is the word)."""
    found = {}
    for word in words:
        span = _word_span(text, word)
        if span is None:
            found[word] = []
        elif offsets is not None:
            start, end = span
            found[word] = [i for i, (s, e) in enumerate(offsets) if e > s and s < end and e > start]
        else:
            pieces = tokenizer.convert_ids_to_tokens(ids)
            found[word] = [i for i, p in enumerate(pieces) if display_token(p).lower() == word.lower()]
    return found


def _encode(tokenizer, text: str) -> tuple[list[int], list | None]:
    try:
        encoded = tokenizer(text, return_offsets_mapping=True)
        return list(encoded["input_ids"]), [tuple(o) for o in encoded["offset_mapping"]]
    except (NotImplementedError, ValueError, TypeError):  # a slow tokenizer has no offsets
        return list(tokenizer(text)["input_ids"]), None


def model_input(tokenizer, example: PronounExample, causal: bool) -> tuple[str, list[int], list | None, int]:
    """(the text read, its token ids, their character offsets, q). Masked: the sentence with the tokenizer's mask
    token, q at that token; causal: the text before [MASK], q its last token (an [EOS] the tokenizer appends is
    dropped, so that q is the last position)."""
    if causal:
        text = example.prefix
        if not text:
            raise ValueError(f"pronoun example {example.name!r}: a causal LM needs some text before {MASK}")
        ids, offsets = _encode(tokenizer, text)
        closing = _trailing_specials(ids, set(tokenizer.all_special_ids))
        ids, offsets = ids[: len(ids) - closing], None if offsets is None else offsets[: len(offsets) - closing]
        if not ids or ids[-1] in set(tokenizer.all_special_ids):
            raise ValueError(f"pronoun example {example.name!r}: no token of {text!r} left to explain")
        return text, ids, offsets, len(ids) - 1
    if tokenizer.mask_token is None:
        raise ValueError("a masked LM's tokenizer needs a mask token; this one has none (give the model kind: prompted)")
    text = example.sentence.replace(MASK, tokenizer.mask_token)
    ids, offsets = _encode(tokenizer, text)
    at = [i for i, t in enumerate(ids) if t == tokenizer.mask_token_id]
    if len(at) != 1:
        raise ValueError(f"pronoun example {example.name!r}: {len(at)} mask tokens in {text!r}, not one")
    return text, ids, offsets, at[0]


def candidate_tokens(tokenizer, example: PronounExample, causal: bool, ids: list[int], query: int) -> tuple[list, list]:
    """Each candidate's first sub-token id, and its number of sub-tokens: the token at the pronoun's place once the
    sentence is tokenized with the candidate written there (masked: at q; causal: right after q), so that a BPE
    tokenizer's leading space ("Ġher") comes with it. Where the filled text does not tokenize alike up to that place,
    the candidate alone (with a leading space where the sentence has one). A candidate that begins with the unknown
    token, or two with the same first sub-token, cannot be told apart: refused."""
    at = example.sentence.index(MASK)
    spaced = at > 0 and example.sentence[at - 1].isspace()
    first, counts = [], []
    for word in example.candidates:
        filled = example.sentence.replace(MASK, word) if not causal else example.sentence[:at] + word
        pieces = list(tokenizer(filled)["input_ids"])
        place = query if not causal else query + 1
        if pieces[:place] == ids[:place] and len(pieces) > place:
            extra = len(pieces) - len(ids) if causal else len(pieces) - len(ids) + 1
            if causal:
                extra -= _trailing_specials(pieces, set(tokenizer.all_special_ids))
            first.append(pieces[place])
            counts.append(max(1, extra))
        else:
            alone = tokenizer((" " if spaced else "") + word, add_special_tokens=False)["input_ids"]
            first.append(alone[0])
            counts.append(len(alone))
    shown = tokenizer.convert_ids_to_tokens(first)
    unk = tokenizer.unk_token_id
    unknown = [word for word, t in zip(example.candidates, first, strict=True) if unk is not None and t == unk]
    if unknown:
        raise ValueError(
            f"pronoun example {example.name!r}: candidate(s) {', '.join(map(repr, unknown))} begin with the unknown token "
            f"{tokenizer.unk_token!r} in this tokenizer, so their scores say nothing; choose words of its vocabulary"
        )
    for i in range(len(first)):
        for j in range(i):
            if first[i] == first[j]:
                raise ValueError(
                    f"pronoun example {example.name!r}: candidates {example.candidates[j]!r} and {example.candidates[i]!r} "
                    f"share their first sub-token {shown[i]!r} in this tokenizer, so they cannot be told apart; "
                    "choose other candidates"
                )
    return first, counts


def attention_maps(model, ids: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """(logits [n, vocabulary], attention [layers, heads, n, n]) of one text: the model's own eager attention
    (`output_attentions=True`), one weight per query head (grouped key/value heads repeated, as the model does)."""
    device = next(model.parameters()).device
    inputs = torch.tensor([ids], device=device)
    with torch.no_grad():
        out = model(input_ids=inputs, attention_mask=torch.ones_like(inputs), output_attentions=True)
    if not out.attentions or any(a is None for a in out.attentions):
        raise ValueError("the model returned no attention weights; load it with attn_implementation='eager'")
    return out.logits[0].double().cpu(), torch.stack([a[0] for a in out.attentions]).double().cpu()


def relevance_maps(maps: torch.Tensor, query: int, rollout_residual: bool = True, flow_solver: str = "scipy") -> dict:
    """Raw attention, rollout and flow from position `query` over every position, at every layer: method ->
    [layers, n] (each row sums to 1), from one text's attention [layers, heads, n, n], as the A&Z analyses read
    them (`run.relevance_and_importance`): heads averaged, rollout of Â = 0.5·W + 0.5·I (of W without
    `rollout_residual`), flow on Â whatever `rollout_residual` says."""
    from attnexp.analyses.az.flow import batch_flow
    from attnexp.analyses.az.rollout import head_average, raw_relevance, relevance_rows, residual_augment, rollout

    batched = maps[None].double()
    lengths = torch.tensor([maps.shape[-1]])
    averaged = head_average(batched)
    raw = raw_relevance(batched, lengths, "cls", query)[0]
    rolled = relevance_rows(rollout(residual_augment(averaged, rollout_residual)), lengths, "cls", query)[0]
    flow, _ = batch_flow(residual_augment(averaged).numpy(), lengths.numpy(), query=query, solver=flow_solver, progress=False)
    return {"raw": raw.numpy(), "rollout": rolled.numpy(), "flow": flow[0]}


def pronoun_relevance(
    model, tokenizer, example: PronounExample, *, causal: bool, rollout_residual: bool = True, flow_solver: str = "scipy"
) -> PronounReading:
    """One example read by a masked LM (`causal=False`) or a causal LM (`causal=True`); see the module docstring."""
    text, ids, offsets, query = model_input(tokenizer, example, causal)
    first, counts = candidate_tokens(tokenizer, example, causal, ids, query)
    logits, maps = attention_maps(model, ids)
    at_q = logits[query]
    chosen = at_q[first]
    return PronounReading(
        example=example,
        causal=causal,
        text=text,
        tokens=tuple(tokenizer.convert_ids_to_tokens(ids)),
        query=query,
        referents=_referent_positions(tokenizer, text, ids, offsets, example.referents),
        pieces=tuple(tokenizer.convert_ids_to_tokens(first)),
        n_pieces=tuple(counts),
        logits=chosen.numpy(),
        relative=torch.softmax(chosen, dim=0).numpy(),
        vocabulary=torch.softmax(at_q, dim=0)[first].numpy(),
        relevance=relevance_maps(maps, query, rollout_residual, flow_solver),
    )


TABLE_COLUMNS = (
    "model", "example", "kind", "text", "query", "method", "layer", "position", "token", "referent", "value",
    "piece", "pieces", "logit", "p_vocabulary",
)  # fmt: skip


def reading_table(reading: PronounReading, model: str) -> pd.DataFrame:
    """The numbers behind one figure, long form: a row per candidate (`method` "candidate": `value` = p(c) / Σ p over
    the candidates, its first sub-token, sub-token count, logit and probability over the whole vocabulary; `layer`
    0, `position` q), then a row per method, layer and position (`value`: relevance from q; `token` as shown,
    `referent`: the referent word the token belongs to, else empty)."""
    kind = "causal_lm" if reading.causal else "masked_lm"
    shared = {"model": model, "example": reading.example.name, "kind": kind, "text": reading.text, "query": reading.query}
    rows = [
        {**shared, "method": CANDIDATE, "layer": 0, "position": reading.query, "token": word, "referent": "",
         "value": float(reading.relative[c]), "piece": reading.pieces[c], "pieces": int(reading.n_pieces[c]),
         "logit": float(reading.logits[c]), "p_vocabulary": float(reading.vocabulary[c])}
        for c, word in enumerate(reading.example.candidates)
    ]  # fmt: skip
    owner = {p: word for word, positions in reading.referents.items() for p in positions}
    tokens = [display_token(t) for t in reading.tokens]
    for method in METHODS:
        for layer, row in enumerate(reading.relevance[method], start=1):
            rows += [
                {**shared, "method": method, "layer": layer, "position": j, "token": tokens[j], "referent": owner.get(j, ""),
                 "value": float(v), "piece": "", "pieces": 0, "logit": np.nan, "p_vocabulary": np.nan}
                for j, v in enumerate(row)
            ]  # fmt: skip
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


LOADERS = {False: "AutoModelForMaskedLM", True: "AutoModelForCausalLM"}


def load_language_model(
    checkpoint: str, *, causal: bool, gguf_file: str | None = None, allow_download: bool = False, device: str = "cpu"
):
    """(model, tokenizer) of a masked LM (`causal=False`) or causal LM checkpoint: a save_pretrained directory, a hub
    name in the cache (downloaded only with `allow_download`) or its `gguf_file` (dequantized to float32), with the
    eager attention whose weights `output_attentions` returns; in eval mode on `device`."""
    import transformers

    from attnexp.models.hf.checkpoints import checkpoint_problem

    problem = checkpoint_problem(checkpoint, allow_download, gguf_file)
    if problem:
        raise FileNotFoundError(problem)
    local, gguf = not allow_download, ({} if gguf_file is None else {"gguf_file": gguf_file})
    tokenizer = transformers.AutoTokenizer.from_pretrained(checkpoint, local_files_only=local, **gguf)
    options = dict(gguf)
    if gguf_file is not None:
        options |= {"dtype": torch.float32, "quantization_config": transformers.GgufConfig(dequantize=True)}
    loader = getattr(transformers, LOADERS[causal])
    model = loader.from_pretrained(checkpoint, local_files_only=local, attn_implementation="eager", **options)
    return model.to(device).eval(), tokenizer
