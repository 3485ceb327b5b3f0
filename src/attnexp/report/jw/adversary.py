"""Adversarial attention figures per model (J&W §6.5, §7): ε-max JSD histograms, against max attention, examples."""

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from attnexp.report.heatmap import (
    BASELINE,
    EXAMPLE_FONT,
    draw_heat_text,
    heat_colorbar,
    line_capacity,
    lines_needed,
    row_label,
    text_canvas,
)
from attnexp.report.jw.data import FigureOptions, ModelResults, max_attention_bin
from attnexp.report.jw.kendall import class_histogram
from attnexp.report.style import hue_palette, new_figure, set_title
from attnexp.report.violins import binned_violins

JSD_BINS = np.linspace(0, 0.7, 41)
JSD_LABEL = "Max JS Divergence within ε"
QUESTION_LABELS = {"qa": "q.", "nli": "hyp."}  # the second input, printed above the attended text


def output_change(original, adversarial) -> float:
    """Δŷ between two output distributions: total variation distance (= |Δp| for binary classification)."""
    return 0.5 * float(np.abs(np.asarray(adversarial, dtype=float) - np.asarray(original, dtype=float)).sum())


def adversary_histogram(results: ModelResults, options: FigureOptions) -> Figure:
    """ε-max JSD per predicted class, 40 bins on [0, 0.7], as proportions of the class (outlines for 3+ classes)."""
    adversary = results.require("adversary")
    frame = pd.DataFrame({"jsd": adversary["emax_jsd"].to_numpy(dtype=float), "class": results.hue(adversary)})
    fig, ax = new_figure(options.width)
    class_histogram(ax, frame, "jsd", JSD_BINS, results, options)
    ax.set_xlim(0, 0.7)
    ax.set_xlabel(JSD_LABEL)
    ax.set_ylabel("Proportion of instances")
    set_title(fig, results.title)
    return fig


def adversary_violin(results: ModelResults, options: FigureOptions) -> Figure:
    """Violins of ε-max JSD per max-attention bin and predicted class (the authors' `eMaxJDS_Scatter`)."""
    adversary = results.require("adversary")
    frame = pd.DataFrame(
        {
            "jsd": adversary["emax_jsd"].to_numpy(dtype=float),
            "bin": max_attention_bin(adversary["max_attention"]),
            "class": results.hue(adversary),
        }
    )
    fig, ax = new_figure(options.width)
    binned_violins(ax, frame, "jsd", hue_palette(results.classes, options.palette))
    ax.set_xlim(-0.05, 0.7)
    ax.set_xlabel(JSD_LABEL)
    ax.set_ylabel("Max attention")
    set_title(fig, results.title)
    return fig


def pick_examples(adversary: pd.DataFrame, n: int, max_tokens: int) -> pd.DataFrame:
    """The `n` instances with the largest ε-max JSD among those short enough to print (ties: earlier rows)."""
    short = adversary[adversary["length"] <= max_tokens]
    pool = short if len(short) >= n else adversary.sort_values("length", kind="stable").head(max(n, 1))
    return pool.sort_values("emax_jsd", ascending=False, kind="stable").head(n)


def adversary_examples(results: ModelResults, options: FigureOptions) -> Figure:
    """Text heatmaps of a few instances: original vs ε-max adversarial attention, with JSD and Δŷ; for QA and NLI
    the question or hypothesis (which the attention over the passage or premise is conditioned on) above them."""
    adversary = results.require("adversary")
    importance = results.require("importance")[["instance_id", "attention"]]
    examples = pick_examples(adversary, options.examples, options.example_max_tokens).merge(importance, on="instance_id")
    left, right = 0.09, 0.99
    chars_per_line = line_capacity((right - left) * options.width)
    blocks = []
    for record in examples.itertuples(index=False):
        words, question = results.words(record.instance_id), results.question_words(record.instance_id)
        question_lines = lines_needed(question, chars_per_line) if question else 0
        blocks.append((record, words, lines_needed(words, chars_per_line), question, question_lines))
    total_lines = sum(2 * lines + question_lines + 1.6 for *_, lines, _, question_lines in blocks) or 3
    fig, ax = text_canvas(options.width, left, right, total_lines, top=0.3)
    # one scale for every row: the largest weight shown (original or adversarial), not each row's own maximum
    vmax = max((float(np.max(w, initial=0)) for b in blocks for w in (b[0].attention, b[0].adversarial_attention)), default=1)
    line_h = 1.0
    y = 0.0
    for record, words, _, question, _ in blocks:
        label = results.classes[int(record.predicted)] if int(record.predicted) < len(results.classes) else record.predicted
        delta = output_change(record.original_output, record.adversarial_output)
        header = f"#{record.instance_id}: predicted {label}, JSD {record.emax_jsd:.3f}, Δŷ {delta:.3f}"
        ax.text(0, y - BASELINE, header, fontsize=EXAMPLE_FONT + 0.5, va="baseline")
        y -= line_h
        if question:  # what the attention is conditioned on, unshaded: it gets no attention weights
            row_label(ax, y, QUESTION_LABELS.get(results.task, "query"))
            y = draw_heat_text(ax, question, None, y, chars_per_line, line_h)
        for name, weights in (("orig.", record.attention), ("adv.", record.adversarial_attention)):
            row_label(ax, y, name)
            y = draw_heat_text(ax, words, np.asarray(weights, dtype=float), y, chars_per_line, line_h, vmax)
        y -= 0.6 * line_h
    if not blocks:
        ax.text(0.5, 0.5, "no adversarial results", ha="center", va="center", transform=ax.transAxes)
    else:
        heat_colorbar(fig, vmax, "attention weight", left)
    height = fig.get_figheight()
    fig.suptitle(results.title, fontsize=8, y=1 - 0.04 / height)
    return fig
