"""A prompted model's template and verbalizer (spec language-models.md §1), from its tokenizer alone: the template's
token ids around {text}, the verbalizer words' first sub-tokens, and what is wrong with either (named with the fix).
No torch: the config check runs `template_problem` and `verbalizer_problem` before any job."""

from collections.abc import Mapping
from dataclasses import dataclass

from attnexp.errors import ConfigError


@dataclass(frozen=True)
class Prompt:
    """A template split around its text: `prefix` and `suffix` token ids (the specials included), the explained
    position's place in the suffix (`query`: an index into it), the verbalizer's first sub-token per class."""

    prefix: tuple[int, ...]
    suffix: tuple[int, ...]
    query: int
    classes: tuple[int, ...]


def _pieces(tokenizer, text: str) -> list[int]:
    return list(map(int, tokenizer(text, add_special_tokens=False)["input_ids"])) if text else []


def text_joiner(template: str) -> str:
    """The whitespace right before `{text}` in the template: it is tokenized with the text, as it would be in the
    filled prompt (byte-level BPE spells " good" and "good" differently)."""
    before = template.split("{text}", 1)[0]
    return before[len(before.rstrip()) :]


def first_pieces(tokenizer, words: list[str], joiner: str = " ") -> list[int]:
    """The first sub-token of each verbalizer word, as it follows the prompt (`joiner` first where the tokenizer
    marks word starts: byte-level BPE); one token id per word."""
    out = []
    for word in words:
        pieces = _pieces(tokenizer, joiner + word) or _pieces(tokenizer, word)
        if not pieces:
            raise ConfigError(f"verbalizer word {word!r} gives no token with this tokenizer; choose another word")
        out.append(pieces[0])
    return out


def verbalizer_problem(tokenizer, verbalizer: dict[str, str]) -> str | None:
    """Two classes whose words share their first sub-token (the class score), named; None if none."""
    words = list(verbalizer.values())
    ids = first_pieces(tokenizer, words)
    seen: dict[int, str] = {}
    for (label, word), token in zip(verbalizer.items(), ids, strict=True):
        if token in seen:
            other = seen[token]
            return (
                f"verbalizer words {verbalizer[other]!r} (class {other}) and {word!r} (class {label}) begin with the same "
                f"sub-token {tokenizer.convert_ids_to_tokens(token)!r}, so the two classes would get one score: choose "
                "words whose first sub-tokens differ"
            )
        seen[token] = label
    return None


def build_prompt(tokenizer, kind: str, template: str, words: list[str], few_shot: list[tuple[str, str]] = ()) -> Prompt:
    """The template's token ids around {text} (few-shot examples, filled with their answer word, prepended), the
    opening and closing specials the tokenizer adds (a masked LM's [CLS] ... [SEP]; a Llama's BOS), q's place."""
    opening, closing = _specials(tokenizer)
    before, after = template.split("{text}", 1)
    before = before[: len(before.rstrip())] if text_joiner(template) else before
    shots = "".join(_filled(template, text, word, kind) + "\n\n" for text, word in few_shot)
    prefix = opening + _pieces(tokenizer, shots + before)
    if kind == "masked_lm":
        left, right = after.split("{mask}", 1)
        mask = int(tokenizer.mask_token_id)
        suffix = _pieces(tokenizer, left.rstrip()) + [mask] + _pieces(tokenizer, right) + closing
        query = len(_pieces(tokenizer, left.rstrip()))
    else:
        suffix = _pieces(tokenizer, after)
        query = len(suffix) - 1
        if not suffix:
            raise ConfigError("a prompted LM's `prompt:` needs text after {text} (its last token is the one explained)")
    return Prompt(tuple(prefix), tuple(suffix), query, tuple(first_pieces(tokenizer, words)))


def _filled(template: str, text: str, word: str, kind: str) -> str:
    if kind == "masked_lm":
        return template.replace("{text}", text).replace("{mask}", word)
    return template.replace("{text}", text) + " " + word


def _specials(tokenizer) -> tuple[list[int], list[int]]:
    """What the tokenizer puts around one text: ([CLS]) and ([SEP]) for a masked LM; (BOS) and () for a Llama."""
    ids = list(map(int, tokenizer("a")["input_ids"]))
    bare = _pieces(tokenizer, "a")
    start = 0
    while start < len(ids) and ids[start : start + len(bare)] != bare:
        start += 1
    return ids[:start], ids[start + len(bare) :]


def template_problem(kind: str, template: str | None, verbalizer: Mapping | None) -> str | None:
    """What is wrong with a prompted model's template and verbalizer, with the fix; None if nothing."""
    if kind == "classifier":
        return None
    if not template or "{text}" not in template:
        return "needs {text} where the input goes (e.g. prompt: '{text} It was')"
    if template.count("{text}") > 1:
        return "has {text} more than once; use it once"
    if kind == "masked_lm" and template.count("{mask}") != 1:
        return "a masked_lm's prompt needs {mask} once, where the class word is read (e.g. '{text} It was {mask}.')"
    if kind == "prompted" and "{mask}" in template:
        return "a prompted (causal) LM reads the class word after the prompt's last token: remove {mask} from the prompt"
    if kind == "masked_lm" and template.index("{mask}") < template.index("{text}"):
        return "{mask} must come after {text} in the prompt"
    if kind == "prompted" and not template.split("{text}", 1)[1].strip():
        return "needs text after {text}: a prompted LM is explained at the prompt's last token (e.g. '{text} It was')"
    if not verbalizer or len(verbalizer) < 2:
        return "verbalizer: needs a word for each class (at least two), e.g. {negative: bad, positive: good}"
    return None
