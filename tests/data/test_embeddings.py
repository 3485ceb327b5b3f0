"""Pretrained word vectors: both text formats, zero rows for specials and unknown words."""

import numpy as np
import pytest
import torch

from attnexp.data.embeddings import load_word_vectors
from attnexp.data.vocab import SPECIALS
from attnexp.models.train import build_model

torch.set_num_threads(1)
VOCAB = [*SPECIALS, "good", "bad", "unseen"]


@pytest.mark.parametrize("header", [True, False])
def test_vectors_fill_known_words_only(tmp_path, header):
    rng = np.random.default_rng(0)
    good, bad = rng.standard_normal(3), rng.standard_normal(3)
    lines = ["3 3"] if header else []
    lines += ["good " + " ".join(map(str, good)), "other 1 2 3", "bad " + " ".join(map(str, bad)) + " "]
    path = tmp_path / "vectors.txt"
    path.write_text("\n".join(lines) + "\n")
    matrix, found = load_word_vectors(path, VOCAB, 3)
    assert found == 2
    np.testing.assert_allclose(matrix[4], good, rtol=1e-6)
    np.testing.assert_allclose(matrix[5], bad, rtol=1e-6)
    assert not matrix[:4].any() and not matrix[6].any()
    normal, _ = load_word_vectors(path, VOCAB, 3, missing="normal")
    assert normal[6].any() and not normal[0].any()


def test_wrong_dimension_is_a_clear_error(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("good 1 2\n")
    with pytest.raises(ValueError, match="3 numbers"):
        load_word_vectors(path, VOCAB, 3)


def test_model_starts_from_the_vectors(tmp_path):
    path = tmp_path / "v.vec"
    path.write_text("good 1 2 3 4\n")
    matrix, _ = load_word_vectors(path, VOCAB, 4)
    meta = {"vocab": VOCAB, "classes": ["0", "1"], "task": "bc"}
    model = build_model(meta, "average", "tanh", 4, 8, embeddings=torch.from_numpy(matrix))
    assert torch.equal(model.embedding.weight[4], torch.tensor([1.0, 2.0, 3.0, 4.0]))
