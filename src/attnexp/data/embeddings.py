"""Pretrained word vectors from a text file (fastText `.vec`, GloVe, word2vec text format), J&W §2.

Rows follow the preprocessed vocabulary. Words absent from the file and UNK/SOS/EOS get zero vectors, as
torchtext does (MIMIC: N(0, 1), `missing="normal"`); PAD is always zero.
"""

from pathlib import Path

import numpy as np

from attnexp.data.vocab import PAD, SPECIALS
from attnexp.errors import DataError


def load_word_vectors(
    path: str | Path, vocab: list[str], dim: int, missing: str = "zero", seed: int = 0, key: str = "data.embeddings"
) -> tuple[np.ndarray, int]:
    """Return (matrix [len(vocab), dim] float32, number of vocabulary words found in the file); `key` is the config
    key that names the file, for the error messages. A leading byte-order mark is skipped; a vocabulary word's vector
    with a NaN, an infinite or a non-numeric entry raises DataError naming the file, the line and the word."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"word-vector file {path} does not exist; fix {key} in the config or set it to null")
    index = {w: i for i, w in enumerate(vocab) if w not in SPECIALS}
    rng = np.random.default_rng(seed)
    matrix = (
        rng.standard_normal((len(vocab), dim)).astype(np.float32)
        if missing == "normal"
        else np.zeros((len(vocab), dim), np.float32)
    )
    found = np.zeros(len(vocab), dtype=bool)
    # utf-8-sig: a byte-order mark (Windows editors) is dropped, not glued to the header or the first word; text mode
    # reads a CRLF line end as "\n"
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        for lineno, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # fastText / word2vec header "<count> <dim>"
            if len(parts) <= dim:
                raise ValueError(f"{path}:{lineno}: expected a word and {dim} numbers; is the file {dim}-dimensional?")
            word = " ".join(parts[:-dim])  # GloVe 840B has a few words containing spaces
            row = index.get(word)
            if row is not None and not found[row]:
                matrix[row] = _vector(parts[-dim:], path, lineno, word, key)
                found[row] = True
    for special in range(len(SPECIALS)):
        matrix[special] = 0.0
    matrix[PAD] = 0.0
    return matrix, int(found.sum())


def _vector(numbers: list[str], path: Path, lineno: int, word: str, key: str) -> np.ndarray:
    """The numbers of one vocabulary word's line as float32; DataError naming the file, line and word when one is not
    a finite number (a NaN or infinite entry would make every model trained on the vectors NaN)."""
    try:
        with np.errstate(over="ignore"):  # a number beyond float32 becomes inf, refused below
            vector = np.asarray(numbers, dtype=np.float32)
    except ValueError:
        bad = next(n for n in numbers if not _is_number(n))
        raise DataError(
            f"{path}:{lineno}: the vector of {word!r} has {bad!r}, which is not a number; fix or delete that line, "
            f"or set {key} to null in the config"
        ) from None
    if not np.isfinite(vector).all():
        position = int(np.flatnonzero(~np.isfinite(vector))[0])
        raise DataError(
            f"{path}:{lineno}: the vector of {word!r} has {numbers[position]!r} (number {position + 1} of {len(numbers)}), "
            f"not a finite float32 value, which would make the model's training NaN; fix or delete that line, or set "
            f"{key} to null in the config"
        )
    return vector


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
