"""Attention permutation figures per model (J&W §6.4, §7): median output change against max attention."""

import warnings

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from attnexp.report.jw.data import FigureOptions, ModelResults, max_attention_bin
from attnexp.report.style import hue_palette, new_figure, place_legend, set_title
from attnexp.report.violins import binned_violins


def _frame(results: ModelResults) -> pd.DataFrame:
    permutation = results.require("permutation")
    return pd.DataFrame(
        {
            "max_attention": permutation["max_attention"].to_numpy(dtype=float),
            "median": permutation["median_output_change"].to_numpy(dtype=float),
            "bin": max_attention_bin(permutation["max_attention"]),
            "class": results.hue(permutation),
        }
    )


def permutation_violin(results: ModelResults, options: FigureOptions) -> Figure:
    """The authors' design: violins of the median Δŷ over 100 permutations per max-attention bin."""
    frame = _frame(results)
    fig, ax = new_figure(options.width)
    binned_violins(ax, frame, "median", hue_palette(results.classes, options.palette))
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel("Median Output Difference")
    ax.set_ylabel("Max attention")
    set_title(fig, results.title)
    return fig


def permutation_density(results: ModelResults, options: FigureOptions) -> Figure:
    """2-D version: a grey density of all instances (max attention, median Δŷ) with each instance as a class-coloured dot."""
    frame = _frame(results)
    palette = hue_palette(results.classes, options.palette)
    fig, ax = new_figure(options.width)
    if len(frame) > 4 and frame["max_attention"].std() > 0 and frame["median"].std() > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            sns.kdeplot(
                frame,
                x="max_attention",
                y="median",
                fill=True,
                levels=6,
                thresh=0.05,
                cmap="Greys",
                alpha=0.7,
                warn_singular=False,
                ax=ax,
            )
    sns.scatterplot(
        frame,
        x="max_attention",
        y="median",
        hue="class",
        palette=palette,
        hue_order=list(palette),
        s=7,
        alpha=0.85,
        linewidth=0.2,
        edgecolor="white",
        ax=ax,
    )
    place_legend(ax)
    ax.set_xlim(0, 1)
    top = float(frame["median"].max()) if len(frame) else 1.0
    ax.set_ylim(-0.02, min(1.05, max(0.1, top * 1.1)))
    ax.set_xlabel("Max attention")
    ax.set_ylabel("Median Output Difference")
    set_title(fig, results.title)
    return fig
