"""Details of J&W per-model figures: three-class histograms as outlines, the question or hypothesis printed
above the attention heatmaps of QA and NLI examples."""

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt

from attnexp.report.jw.adversary import adversary_examples, adversary_histogram
from attnexp.report.jw.data import FigureOptions, ModelResults
from attnexp.report.jw.kendall import tau_histogram

OPTIONS = FigureOptions(palette="spec", width=3.0, dpi=40, examples=1, example_max_tokens=12)
VOCAB = ["<pad>", "<unk>", "<s>", "</s>", "mary", "went", "to", "the", "garden", "where", "is", "?"]


def results(classes, task="nli", n=30):
    rng = np.random.default_rng(1)
    ids = [f"d/test-{i}" for i in range(n)]
    predicted = np.arange(n) % len(classes)
    instances = pd.DataFrame(
        {"instance_id": ids, "tokens": [np.array([2, 4, 5, 6, 7, 8, 3])] * n, "question": [np.array([2, 9, 10, 4, 11, 3])] * n}
    )
    kendall = pd.DataFrame(
        {"instance_id": ids, "pair": "attn_grad", "tau": rng.uniform(-1, 1, n), "is_nan": False, "predicted": predicted}
    )
    attention = [rng.dirichlet(np.ones(5)) for _ in range(n)]
    adversary = pd.DataFrame(
        {
            "instance_id": ids,
            "predicted": predicted,
            "emax_jsd": rng.uniform(0, 0.69, n),
            "length": 5,
            "max_attention": [a.max() for a in attention],
            "original_output": [np.eye(len(classes))[p] for p in predicted],
            "adversarial_output": [np.eye(len(classes))[p] for p in predicted],
            "adversarial_attention": [a[::-1] for a in attention],
        }
    )
    importance = pd.DataFrame({"instance_id": ids, "attention": attention})
    return ModelResults("d", "lstm", "tanh", 0, task, list(classes), VOCAB, importance, kendall, None, adversary, instances)


def test_three_class_histograms_are_outlines_two_class_histograms_bars():
    for draw in (lambda r: tau_histogram(r, OPTIONS, "attn_grad"), lambda r: adversary_histogram(r, OPTIONS)):
        three = draw(results(["contradiction", "entailment", "neutral"])).axes[0]
        assert not [p for p in three.patches if p.get_fill()]  # no translucent bars blending into one colour
        two = draw(results(["0", "1"], task="bc")).axes[0]
        assert sum(p.get_fill() for p in two.patches) > 10  # the paper's overlaid bars
        plt.close("all")


def test_nli_and_qa_examples_show_the_hypothesis_or_question():
    for task, label in (("nli", "hyp."), ("qa", "q.")):
        texts = [t.get_text() for t in adversary_examples(results(["a", "b", "c"], task=task), OPTIONS).axes[0].texts]
        assert label in texts and "where" in texts and "garden" in texts  # the question and the attended text
        plt.close("all")
