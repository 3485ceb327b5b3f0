"""Figures that do not mislead: heatmaps on one explicit colour scale with a colour bar (A&Z [CLS] maps, the
API's text heatmap, adversary examples), words on a common baseline in evenly spaced boxes, W&P violins in J&W's
bin order with class names and "n = k" notes, separate λ labels, whole layers on the A&Z x axis."""

import numpy as np
import pandas as pd
import pytest
from matplotlib import pyplot as plt
from matplotlib.colors import to_hex
from matplotlib.patches import Rectangle

from attnexp.analyses.az.measures import METHODS
from attnexp.report import az, wp
from attnexp.report.heatmap import heat_cmap, text_heatmap
from attnexp.report.jw.adversary import adversary_examples, adversary_violin
from attnexp.report.style import paper_style
from tests.report.test_jw_figure_details import OPTIONS, results


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _boxes(ax) -> list[Rectangle]:
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def _has_colour_bar(fig) -> bool:
    return any(getattr(ax, "_colorbar", None) is not None for ax in fig.axes)


def _words(ax):
    return [t for t in ax.texts if t.get_fontfamily() == ["monospace"]]


@pytest.mark.parametrize("dpi", [72, 150])  # 150: the default; hinted glyphs were 6 % wider there
def test_text_heatmap_words_share_a_baseline_in_evenly_spaced_boxes(dpi):
    words = ["a", "supercalifragilistic", "on", "tall", "yyy", "x"]
    with paper_style():
        fig = text_heatmap(words, {"attention": [0.1, 0.3, 0.1, 0.2, 0.2, 0.1]}, width=4.0)
        ax = fig.axes[0]
        fig.set_dpi(dpi)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        texts, boxes = _words(ax), _boxes(ax)
        word_extents = [t.get_window_extent(renderer) for t in texts]
    assert len(texts) == len(boxes) == len(words)
    assert {t.get_position()[1] for t in texts} == {texts[0].get_position()[1]} and texts[0].get_va() == "baseline"
    extents = [b.get_window_extent(renderer) for b in boxes]
    assert len({(round(e.y0, 3), round(e.y1, 3)) for e in extents}) == 1  # one line, boxes of one height
    gaps = [right.x0 - left.x1 for left, right in zip(extents, extents[1:], strict=False)]
    assert min(gaps) > 0 and max(gaps) - min(gaps) < 0.01  # the same gap after a long word as after a short one
    for word, box in zip(word_extents, extents, strict=True):  # each word inside its own box
        assert box.x0 < word.x0 and word.x1 < box.x1 and box.y0 <= word.y0 and word.y1 <= box.y1 + 1e-6


def test_text_heatmap_rows_share_one_scale_with_a_colour_bar():
    uniform, peaked = [0.25] * 4, [0.02, 0.9, 0.04, 0.04]
    fig = text_heatmap(["w", "x", "y", "z"], {"attention": uniform, "gradient": peaked})
    colours = [to_hex(b.get_facecolor()) for b in _boxes(fig.axes[0])]
    assert len(set(colours[:4])) == 1 and colours[0] != colours[5] == to_hex(heat_cmap()(1.0))  # uniform is not "max"
    assert colours[0] == to_hex(heat_cmap()(0.25 / 0.9))
    assert _has_colour_bar(fig)


def test_adversary_examples_shade_original_and_adversarial_rows_on_one_scale():
    model = results(["a", "b", "c"], task="nli")
    model.adversary["adversarial_attention"] = [np.full(5, 0.2)] * len(model.adversary)  # uniform
    fig = adversary_examples(model, OPTIONS)
    colours = [to_hex(b.get_facecolor()) for b in _boxes(fig.axes[0])]
    assert len(colours) == 10 and _has_colour_bar(fig)  # 5 words, original and adversarial
    original, adversarial = colours[:5], colours[5:]
    assert original.count(to_hex(heat_cmap()(1.0))) == 1  # the figure's largest weight alone is darkest
    assert len(set(adversarial)) == 1 and adversarial[0] != to_hex(heat_cmap()(1.0))  # uniform is not "all maximal"


def test_cls_maps_share_one_colour_scale_with_a_colour_bar():
    lengths = [6, 6]
    uniform = [[1 / 6] * 6, [1 / 6] * 6]
    peaked = [[0.5, 0.35, 0.05, 0.05, 0.025, 0.025], [0.5, 0.1, 0.1, 0.1, 0.1, 0.1]]  # words: 0.7, ... / 0.2 each
    relevance = pd.DataFrame(
        {
            "instance_id": ["a", "b"],
            "length": lengths,
            "label": [0, 1],
            "predicted": [0, 0],
            "tokens": [list(range(2, 8))] * 2,
            "subject": [[1]] * 2,
            **{m: [uniform if m == "raw" else peaked] * 2 for m in METHODS},
        }
    )
    fig = az.cls_map_figure(relevance, ["<pad>", "<unk>", "<s>", "x", "y", "z", "w", "v", "u"], 3.3)
    limits = [image.get_clim() for ax in fig.axes for image in ax.get_images()]
    # the maps are over the words, each row renormalised: raw's uniform 0.2 is pale beside the peak of 0.7
    assert len(limits) == 6 and all(low == 0 and high == pytest.approx(0.7) for low, high in limits)
    assert _has_colour_bar(fig)


def test_the_correlation_figure_marks_whole_layers():
    summary = pd.DataFrame(
        [
            {"task": "d", "method": m, "importance": i, "layer": layer, "mean": 0.1 * layer, "std": 0.05}
            for m in METHODS
            for i in ("blankout", "grad")
            for layer in (1, 2)
        ]
    )
    fig = az.correlation_figure(summary, "d", "grad", "spec", 3.3)
    for ax in fig.axes:
        assert list(ax.get_xticks()) == [1, 2]


def _bin_order(ax) -> list[str]:
    ticks = sorted(zip(ax.get_yticks(), [t.get_text() for t in ax.get_yticklabels()], strict=True))
    top_first = ticks if ax.yaxis_inverted() else ticks[::-1]
    return [label for _, label in top_first]


def test_wp_violins_run_in_jw_bin_order_with_class_names_and_n_notes():
    rng = np.random.default_rng(0)
    n = 40
    variance = pd.DataFrame(
        {
            "attn_diff": rng.uniform(0, 0.6, n),
            "y_diff": rng.uniform(0, 1, n),
            "max_attn": np.r_[np.linspace(0, 0.74, n - 1), 0.9],  # one instance in [.75, 1], ≥ 6 per class below
            "class": np.r_[np.arange(n - 1) % 2, 1],
        }
    )
    wp_ax = wp.seed_violin(variance, classes=["negative", "positive"]).axes[0]
    jw_ax = adversary_violin(results(["a", "b"], task="bc"), OPTIONS).axes[0]
    assert _bin_order(wp_ax) == _bin_order(jw_ax) == ["[0, .25)", "[.25, .5)", "[.5, .75)", "[.75, 1]"]
    assert [t.get_text() for t in wp_ax.get_legend().get_texts()] == ["negative", "positive"]
    assert [t.get_text() for t in wp_ax.texts] == ["n = 1"]  # the lone instance in the top bin
    scatter = wp.seed_scatter(variance, classes=["negative", "positive"]).axes[0]
    assert {t.get_text() for t in scatter.get_legend().get_texts()} == {"negative", "positive"}


def test_coinciding_adversaries_share_one_lambda_label():
    points = pd.DataFrame(
        {
            "model": ["seed", "adversary", "adversary", "adversary"],
            "label": ["50", "0.1", "1", "10"],
            "jsd": [0.1, 0.6, 0.6, 0.3],
            "tvd": [0.03, 0.2, 0.2, 0.1],
        }
    )
    ax = wp.jsd_tvd_figure(points).axes[0]
    labels = sorted(t.get_text() for t in ax.texts if t.get_text().startswith("λ"))
    assert labels == ["λ=0.1, 1", "λ=10"]
