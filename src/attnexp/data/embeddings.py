"""Pretrained word vectors from a text file (fastText `.vec`, GloVe, word2vec text format), J&W §2.

Rows follow the preprocessed vocabulary. Words absent from the file and UNK/SOS/EOS get zero vectors, as
torchtext does (MIMIC: N(0, 1), `missing="normal"`); PAD is always zero.
"""

from pathlib import Path

import numpy as np

from attnexp.data.vocab import PAD, SPECIALS


def load_word_vectors(
    path: str | Path, vocab: list[str], dim: int, missing: str = "zero", seed: int = 0
) -> tuple[np.ndarray, int]:
    """Return (matrix [len(vocab), dim] float32, number of vocabulary words found in the file)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"word-vector file {path} does not exist; fix data.embeddings in the config or set it to null")
    index = {w: i for i, w in enumerate(vocab) if w not in SPECIALS}
    rng = np.random.default_rng(seed)
    matrix = (
        rng.standard_normal((len(vocab), dim)).astype(np.float32)
        if missing == "normal"
        else np.zeros((len(vocab), dim), np.float32)
    )
    found = np.zeros(len(vocab), dtype=bool)
    with open(path, encoding="utf-8", errors="replace") as handle:
        for lineno, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # fastText / word2vec header "<count> <dim>"
            if len(parts) <= dim:
                raise ValueError(f"{path}:{lineno}: expected a word and {dim} numbers; is the file {dim}-dimensional?")
            word = " ".join(parts[:-dim])  # GloVe 840B has a few words containing spaces
            row = index.get(word)
            if row is not None and not found[row]:
                matrix[row] = np.asarray(parts[-dim:], dtype=np.float32)
                found[row] = True
    for special in range(len(SPECIALS)):
        matrix[special] = 0.0
    matrix[PAD] = 0.0
    return matrix, int(found.sum())
