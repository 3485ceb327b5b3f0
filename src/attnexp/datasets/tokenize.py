"""The J&W text cleaners (§3.1, §3.3): spaCy's rule-based English tokenizer, no model download.

`spacy.blank("en")` is the weight-free equivalent of the authors' spaCy 2.1 `en` pipeline with the
parser, tagger and NER disabled: tokenization is rule-based either way.
"""

import re
import string
from functools import lru_cache

_SPACES = re.compile(r"\s+")
_DEID = re.compile(r"\[\s*\*\s*\*(.*?)\*\s*\*\s*\]")  # on the spaCy tokens joined by spaces: `[ * * ... * * ]`
_REPEATED_SYMBOL = re.compile(r"([^a-zA-Z0-9])(\s*\1\s*)+")  # a run of one symbol, spaced or not: `. . .`, `===`
_NON_WORD = re.compile(r"\W")
_NON_WORD_RUN = re.compile(r"(\W)+")
_KERAS_FILTER = str.maketrans({c: " " for c in string.punctuation.replace("'", "") + "\t\n"})


@lru_cache(maxsize=1)
def tokenizer():
    import spacy

    return spacy.blank("en").tokenizer


def spacy_tokens(text: str) -> list[str]:
    return [t.text for t in tokenizer()(text)]


def collapse(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def has_digit(token: str) -> bool:
    """Python's `str.isdigit` on any character, as the authors test it (catches superscripts such as `²`,
    which the regex `\\d` misses)."""
    return any(c.isdigit() for c in token)


def clean(text: str, mimic: bool = False) -> str:
    """J&W `clean`: collapse whitespace, spaCy-tokenize, lowercase, tokens with a digit -> `qqq`.

    `mimic=True` is the authors' `cleaner_mimic`: after tokenisation (tokens joined by spaces) it maps
    de-identification spans `[** ... **]` to `<DE>` and collapses each run of one non-alphanumeric character,
    spaced (`. . .`) or not (`=====`), to that character once, then re-splits on spaces.
    """
    tokens = [t.lower() for t in spacy_tokens(collapse(text)) if not t.isspace()]
    if mimic:
        joined = _DEID.sub(" <DE> ", " ".join(tokens))
        tokens = collapse(_REPEATED_SYMBOL.sub(r"\1 ", joined)).split()
    return " ".join("qqq" if has_digit(t) else t for t in tokens)


def clean_sst(text: str) -> str:
    """SST recipe: delete `-LRB-`, `-RRB-` -> space, non-word chars -> space, spaCy tokens lowercased (no `qqq`)."""
    text = text.replace("-LRB-", "").replace("-RRB-", " ")
    text = collapse(_NON_WORD.sub(" ", text))
    return " ".join(t.lower() for t in spacy_tokens(text) if not t.isspace())


def clean_newsgroups(text: str) -> str:
    """20News recipe: `clean`, then each maximal run of non-word characters -> its last character, spaced."""
    return collapse(_NON_WORD_RUN.sub(r" \1 ", clean(text)))


def keras_tokens(text: str) -> str:
    """Keras `text_to_word_sequence` emulation for IMDB: lowercase, punctuation except `'` -> space, split."""
    return " ".join(text.lower().translate(_KERAS_FILTER).split())


def whitespace_tokens(text: str) -> str:
    """Text already tokenised: split on whitespace, nothing else (the generated data)."""
    return collapse(text)


# Named text recipes: a dataset's `tokenizer` (registry, or `user_datasets.<name>.tokenizer`) picks one, and the
# Python API cleans a raw sentence with the same recipe as the model's training data.
TOKENIZERS = {
    "sst": clean_sst,
    "spacy": clean,
    "mimic": lambda text: clean(text, mimic=True),
    "newsgroups": clean_newsgroups,
    "keras": keras_tokens,
    "whitespace": whitespace_tokens,
}
