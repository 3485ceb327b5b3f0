"""Kendall τ figures per model (J&W §7): histograms by predicted class, densities of τ and of τ differences."""

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MultipleLocator

from attnexp.report.jw.data import FigureOptions, ModelResults
from attnexp.report.style import hue_palette, new_figure, place_legend, set_title

PAIR_LABELS = {
    "attn_grad": "τ(attention, gradient)",
    "attn_loo": "τ(attention, LOO)",
    "grad_loo": "τ(gradient, LOO)",
    "attn_ig": "τ(attention, IG)",
    "ig_loo": "τ(IG, LOO)",
    "grad_ig": "τ(gradient, IG)",
}
TAU_BINS = np.linspace(-1, 1, 31)


def tau_wide(kendall: pd.DataFrame) -> pd.DataFrame:
    """One row per instance, one τ column per pair (undefined τ stays NaN)."""
    tau = kendall.assign(tau=kendall["tau"].where(~kendall["is_nan"]))
    wide = tau.pivot_table(index=["instance_id", "predicted"], columns="pair", values="tau", dropna=False, aggfunc="first")
    return wide.reset_index()


def class_histogram_style(n_classes: int) -> dict:
    """How per-class histograms overlay: the paper's translucent bars for two classes; outlines (unfilled steps)
    for three or more, whose translucent bars would blend into one muddy colour."""
    if n_classes <= 2:
        return {"element": "bars", "alpha": 0.6, "edgecolor": "black", "linewidth": 0.4}
    return {"element": "step", "fill": False, "linewidth": 1.4}


def class_histogram(ax, frame: pd.DataFrame, x: str, bins, results: ModelResults, options: FigureOptions) -> None:
    """`frame[x]` as overlaid histograms on `bins`, one per predicted class (`frame["class"]`), each as proportions
    of its class, in the classes' colours and styled by `class_histogram_style`; the legend placed."""
    palette = hue_palette(results.classes, options.palette)
    sns.histplot(
        frame,
        x=x,
        hue="class",
        bins=bins,
        stat="proportion",
        common_norm=False,
        **class_histogram_style(frame["class"].nunique()),
        palette=palette,
        hue_order=list(palette),
        ax=ax,
    )
    place_legend(ax)


def tau_histogram(results: ModelResults, options: FigureOptions, pair: str) -> Figure:
    """Overlaid τ histograms, one per predicted class, as proportions of that class (30 bins on [-1, 1]); outlines
    for three or more classes (`class_histogram_style`)."""
    kendall = results.require("kendall")
    taus = kendall[(kendall["pair"] == pair) & ~kendall["is_nan"]]
    fig, ax = new_figure(options.width)
    if taus.empty:
        ax.text(0.5, 0.5, f"no defined {PAIR_LABELS.get(pair, pair)}", ha="center", va="center", transform=ax.transAxes)
    else:
        frame = pd.DataFrame({"tau": taus["tau"].to_numpy(), "class": results.hue(taus)})
        class_histogram(ax, frame, "tau", TAU_BINS, results, options)
    ax.set_xlim(-1, 1)
    ax.xaxis.set_major_locator(MultipleLocator(0.5))
    ax.set_xlabel(f"Kendall {PAIR_LABELS.get(pair, pair)}")
    ax.set_ylabel("Proportion of instances")
    set_title(fig, results.title)
    return fig


def _density_figure(
    results: ModelResults, options: FigureOptions, columns: dict[str, np.ndarray], xlabel: str, limit: float, step: float
) -> tuple[Figure, Axes]:
    """KDEs (black; solid, dashed, dotted in the order of `columns`, label -> values) on [-limit, limit] with ticks
    every `step`; a note instead where no column has two distinct finite values."""
    fig, ax = new_figure(options.width)
    drawn = 0
    for (label, values), style in zip(columns.items(), ("-", "--", ":"), strict=False):
        values = values[np.isfinite(values)]
        if len(values) < 2 or np.ptp(values) == 0:
            continue
        sns.kdeplot(x=values, ax=ax, color="black", linestyle=style, label=label, warn_singular=False)
        drawn += 1
    if drawn:
        ax.set_ylim(0, ax.get_ylim()[1] * 1.35)  # headroom so the legend sits above the curves
        ax.legend(loc="upper left")
    else:
        ax.text(0.5, 0.5, "too few defined τ values", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlim(-limit, limit)
    ax.xaxis.set_major_locator(MultipleLocator(step))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Density")
    set_title(fig, results.title)
    return fig, ax


def tau_densities(results: ModelResults, options: FigureOptions) -> Figure:
    """KDEs (all instances) of τ(attn, LOO) solid, τ(attn, grad) dashed, τ(grad, LOO) dotted."""
    wide = tau_wide(results.require("kendall"))
    pairs = [p for p in ("attn_loo", "attn_grad", "grad_loo") if p in wide]
    columns = {PAIR_LABELS[p]: wide[p].to_numpy(dtype=float) for p in pairs}
    return _density_figure(results, options, columns, "Kendall τ", limit=1, step=0.5)[0]


def tau_differences(results: ModelResults, options: FigureOptions) -> Figure:
    """KDEs of the per-instance differences τ(grad, LOO) − τ(attn, LOO) (solid) and τ(grad, LOO) − τ(attn, grad) (dashed)."""
    wide = tau_wide(results.require("kendall"))
    columns = {}
    if {"grad_loo", "attn_loo"} <= set(wide):
        columns["τ(grad, LOO) − τ(attn, LOO)"] = (wide["grad_loo"] - wide["attn_loo"]).to_numpy(dtype=float)
    if {"grad_loo", "attn_grad"} <= set(wide):
        columns["τ(grad, LOO) − τ(attn, grad)"] = (wide["grad_loo"] - wide["attn_grad"]).to_numpy(dtype=float)
    fig, ax = _density_figure(results, options, columns, "Difference in Kendall τ", limit=2, step=1.0)
    ax.axvline(0, color="0.6", linewidth=0.6, zorder=0)
    return fig
