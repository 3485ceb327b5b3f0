"""The vocabulary every preprocessed dataset shares: special tokens, how it is built, how text is encoded."""

from collections import Counter

PAD, UNK, SOS, EOS = 0, 1, 2, 3
SPECIALS = ("<0>", "<UNK>", "<SOS>", "<EOS>")


def build_vocabulary(documents: list[list[str]], min_df: int) -> list[str]:
    """Words with document frequency >= min_df, most frequent first (ties by first appearance)."""
    df = Counter()
    for doc in documents:
        df.update(set(doc))
    order = {w: i for i, w in enumerate(dict.fromkeys(w for doc in documents for w in doc))}
    words = [w for w, c in df.items() if c >= min_df and w not in SPECIALS]
    words.sort(key=lambda w: (-df[w], order[w]))
    return list(SPECIALS) + words


def encode(tokens: list[str], index: dict[str, int], add_markers: bool = True) -> list[int]:
    ids = [index.get(t, UNK) for t in tokens]
    return [SOS, *ids, EOS] if add_markers else ids
