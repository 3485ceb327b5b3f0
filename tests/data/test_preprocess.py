"""The shared preprocessed format (J&W §3.2-3.4)."""

import pandas as pd

from attnexp.data.preprocess import carve_split, length_filter
from attnexp.data.vocab import EOS, SOS, build_vocabulary
from attnexp.datasets.generated.planted import NEGATIVE_CUES, POSITIVE_CUES


def test_vocabulary_keeps_words_by_document_frequency():
    docs = [["a", "b", "b"], ["a", "c"], ["a", "d"], ["c"]]
    vocab = build_vocabulary(docs, min_df=2)
    assert vocab[:4] == ["<0>", "<UNK>", "<SOS>", "<EOS>"]
    assert vocab[4:] == ["a", "c"]


def test_length_filter_bounds_are_exclusive_and_the_quirk_drops_extremes():
    lengths = pd.Series([3, 5, 6, 7, 9])
    assert length_filter(lengths, (5, None), False).tolist() == [False, False, True, True, True]
    assert length_filter(lengths, (None, 7), False).tolist() == [True, True, True, False, False]
    assert length_filter(lengths, (None, None), True).tolist() == [False, True, True, True, False]


def test_carve_split_follows_sklearn_ceil_semantics():
    kept, held = carve_split(list(range(10)), 0.15, seed=16377)
    assert len(held) == 2 and sorted(kept + held) == list(range(10))
    assert carve_split(list(range(10)), 0.15, seed=16377) == (kept, held)


def test_preprocessed_sequences_are_marked_sorted_and_carry_rationales(planted_sentiment):
    instances, meta = planted_sentiment
    assert meta["sizes"] == {"train": 1200, "dev": 200, "test": 200}
    assert all(t[0] == SOS and t[-1] == EOS for t in instances["tokens"])
    assert (instances["length"] == instances["tokens"].map(len) - 2).all()
    for split in ("dev", "test"):
        lengths = instances.loc[instances["split"] == split, "length"].to_numpy()
        assert (lengths[1:] >= lengths[:-1]).all()
    assert instances["instance_id"].is_unique
    vocab = meta["vocab"]
    cues = set(POSITIVE_CUES + NEGATIVE_CUES)
    for tokens, rationale in zip(instances["tokens"], instances["rationale"], strict=True):
        assert rationale and all(vocab[tokens[p]] in cues for p in rationale)
        assert all(1 <= p <= len(tokens) - 2 for p in rationale)


def test_nli_classes_are_sorted_names_and_questions_are_encoded(planted_nli):
    instances, meta = planted_nli
    assert meta["classes"] == ["contradiction", "entailment", "neutral"]
    assert meta["task"] == "nli"
    assert instances["question"].map(len).min() >= 3
