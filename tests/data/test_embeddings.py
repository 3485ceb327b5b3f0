"""Pretrained word vectors: both text formats, zero rows for specials and unknown words."""

import numpy as np
import pytest
import torch

from attnexp.data.embeddings import load_word_vectors
from attnexp.data.vocab import SPECIALS
from attnexp.errors import DataError
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


@pytest.mark.parametrize("value", ["nan", "-inf", "1e39"])  # 1e39 overflows float32 to inf
def test_a_non_finite_vector_names_the_file_line_word_and_fix(tmp_path, value):
    path = tmp_path / "v.vec"
    path.write_text(f"2 3\ngood 1 2 3\nbad 0.5 {value} 1\n")
    with pytest.raises(DataError) as error:
        load_word_vectors(path, VOCAB, 3, key="data.embeddings.fasttext_simple")
    message = str(error.value)
    assert f"{path}:3: the vector of 'bad' has '{value}' (number 2 of 3)" in message
    assert "fix or delete that line, or set data.embeddings.fasttext_simple to null" in message


def test_a_non_finite_vector_of_a_word_outside_the_vocabulary_is_skipped(tmp_path):
    path = tmp_path / "v.vec"
    path.write_text("other nan nan nan\ngood 1 2 3\n")
    assert load_word_vectors(path, VOCAB, 3)[1] == 1


def test_a_non_number_names_the_file_line_and_word(tmp_path):
    path = tmp_path / "v.vec"
    path.write_text("good 1 2 x3\n")
    with pytest.raises(DataError, match=r"v.vec:1: the vector of 'good' has 'x3', which is not a number"):
        load_word_vectors(path, VOCAB, 3)


@pytest.mark.parametrize("header", [True, False])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_byte_order_mark_and_crlf_line_ends_are_read(tmp_path, header, newline):
    path = tmp_path / "v.vec"
    lines = (["2 3"] if header else []) + ["good 1 2 3", "bad 4 5 6"]
    path.write_bytes(b"\xef\xbb\xbf" + newline.join(lines).encode() + newline.encode())
    matrix, found = load_word_vectors(path, VOCAB, 3)
    assert found == 2  # the first word is "good", not "\ufeffgood"
    np.testing.assert_array_equal(matrix[4:6], [[1, 2, 3], [4, 5, 6]])


def test_model_starts_from_the_vectors(tmp_path):
    path = tmp_path / "v.vec"
    path.write_text("good 1 2 3 4\n")
    matrix, _ = load_word_vectors(path, VOCAB, 4)
    meta = {"vocab": VOCAB, "classes": ["0", "1"], "task": "bc"}
    model = build_model(meta, "average", "tanh", 4, 8, embeddings=torch.from_numpy(matrix))
    assert torch.equal(model.embedding.weight[4], torch.tensor([1.0, 2.0, 3.0, 4.0]))
