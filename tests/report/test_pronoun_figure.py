"""A&Z Fig. 4 draws from the table the analysis writes: a PNG of two paper columns and a PDF, for a masked LM's
reading and a causal LM's, short and long sentences, few and many layers."""

import numpy as np
import pytest
from PIL import Image

from attnexp.analyses.az.pronouns import PronounExample, PronounReading, reading_table
from attnexp.io import write_csv
from attnexp.report.pronouns import write_pronoun_figure
from attnexp.report.style import FigureStyle

STYLE = FigureStyle(palette="spec", width=3.3, dpi=60)


def reading(tokens: list[str], layers: int, causal: bool, query: int) -> PronounReading:
    rng = np.random.default_rng(len(tokens) + layers)
    n = len(tokens)
    rows = rng.random((layers, n)) * (np.arange(n) <= query if causal else 1)
    rows /= rows.sum(1, keepdims=True)
    example = PronounExample("ex", "The author talked to Sara about [MASK] book.", ("his", "her"), ("author", "Sara"))
    logits = np.array([0.3, -0.2])
    return PronounReading(
        example=example, causal=causal, text=" ".join(tokens), tokens=tuple(tokens), query=query,
        referents={"author": [2], "Sara": [5]}, pieces=("his", "her"), n_pieces=(1, 1), logits=logits,
        relative=np.exp(logits) / np.exp(logits).sum(), vocabulary=np.array([0.01, 0.006]),
        relevance={"raw": rows, "rollout": rows[::-1].copy(), "flow": rows},
    )  # fmt: skip


CASES = {
    "masked": (["[CLS]", "the", "author", "talked", "to", "sara", "about", "[MASK]", "book", ".", "[SEP]"], 12, False, 7),
    "causal": (["<s>", "The", "author", "talked", "to", "Sara", "about"], 2, True, 6),
    "long": (["[CLS]", "the", "author", "talked", "to", "sara", *[f"w{i}" for i in range(40)], "[MASK]", "[SEP]"], 24, False, 46),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_pronoun_figure_is_a_two_column_png_and_a_pdf(tmp_path, case):
    table = tmp_path / "ex.csv"
    write_csv(table, reading_table(reading(*CASES[case]), "tiny"))
    outputs = {"png": tmp_path / "ex.png", "pdf": tmp_path / "ex.pdf"}
    write_pronoun_figure(table=table, sentence="The author talked to Sara about [MASK] book.", style=STYLE, outputs=outputs)
    assert outputs["pdf"].read_bytes()[:4] == b"%PDF"
    image = Image.open(outputs["png"])
    assert image.width == pytest.approx(2 * STYLE.width * STYLE.dpi, abs=2)
    assert 0.3 * image.width < image.height < 1.2 * image.width
    pixels = np.asarray(image.convert("L"))
    assert pixels.min() < 128 and (pixels < 250).mean() > 0.05
