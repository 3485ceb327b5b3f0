"""Across-model bar charts (J&W §7): mean τ per dataset, BiLSTM vs Average, and the τ differences."""

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from attnexp.report.jw.data import FigureOptions
from attnexp.report.jw.kendall import PAIR_LABELS
from attnexp.report.style import ENCODER_COLOURS, ENCODER_NAMES, new_figure

COMPARED = ("lstm", "average")


def _overall(table: pd.DataFrame, attention: str, pair: str) -> pd.DataFrame:
    rows = table[(table["attention"] == attention) & (table["pair"] == pair) & (table["group"] == "Overall")]
    return rows.set_index(["dataset", "encoder"])


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)


def _height(n_datasets: int, per_bar: int, width: float) -> float:
    return max(0.55, (0.6 + 0.14 * n_datasets * per_bar) / width)


def kendall_bars(
    kendall: pd.DataFrame, cross: pd.DataFrame, attention: str, options: FigureOptions, order: Sequence[str], pair: str
) -> Figure:
    """Horizontal bars of the Overall mean τ per dataset, one bar per encoder (BiLSTM vs Average), ± std."""
    rows = _overall(kendall, attention, pair)
    datasets = [d for d in order if d in rows.index.get_level_values("dataset")]
    encoders = [e for e in COMPARED if e in rows.index.get_level_values("encoder")]
    fig, ax = new_figure(options.width, aspect=_height(len(datasets), len(encoders), options.width))
    if not datasets:
        _empty(ax, f"no {PAIR_LABELS.get(pair, pair)} for {attention} attention")
        return fig
    step = 0.8 / max(len(encoders), 1)
    y = np.arange(len(datasets))
    for i, encoder in enumerate(encoders):
        values = rows.reindex([(d, encoder) for d in datasets])
        ax.barh(
            y + (i - (len(encoders) - 1) / 2) * step,
            values["mean"],
            height=step,
            xerr=values["std"],
            color=ENCODER_COLOURS[encoder],
            label=ENCODER_NAMES[encoder],
            error_kw={"elinewidth": 0.6, "capsize": 1.5},
        )
    ax.set_yticks(y, datasets)
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.6)
    ax.set_xlim(-1, 1)
    ax.set_xlabel(f"Mean Kendall {PAIR_LABELS.get(pair, pair)} (± std)")
    ax.set_title(f"{attention} attention", pad=14)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(encoders), borderaxespad=0.1)
    return fig


def difference_bars(
    kendall: pd.DataFrame, cross: pd.DataFrame, attention: str, options: FigureOptions, order: Sequence[str]
) -> Figure:
    """Two panels: mean τ(grad, LOO) − τ(attn, LOO) per dataset (BiLSTM), and Average − BiLSTM mean τ(attn, LOO)."""
    gap = cross[
        (cross["attention"] == attention) & (cross["encoder"] == "lstm") & (cross["measure"] == "gradloo_minus_attnloo")
    ].set_index("dataset")
    loo = _overall(kendall, attention, "attn_loo")["mean"].unstack("encoder")
    datasets = [d for d in order if d in gap.index or d in loo.index]
    fig, axes = new_figure(options.width, aspect=2 * _height(len(datasets), 1, options.width), nrows=2)
    y = np.arange(len(datasets))
    panels = [
        (
            gap["mean"].reindex(datasets) if len(gap) else pd.Series(np.nan, index=datasets),
            gap["std"].reindex(datasets) if len(gap) else None,
            "τ(grad, LOO) − τ(attn, LOO), BiLSTM",
            ENCODER_COLOURS["lstm"],
        ),
        (
            (loo["average"] - loo["lstm"]).reindex(datasets)
            if {"average", "lstm"} <= set(loo.columns)
            else pd.Series(np.nan, index=datasets),
            None,
            "Average − BiLSTM mean τ(attn, LOO)",
            ENCODER_COLOURS["average"],
        ),
    ]
    for ax, (values, errors, label, colour) in zip(axes, panels, strict=True):
        if values.notna().any():
            ax.barh(
                y,
                values.to_numpy(),
                xerr=None if errors is None else errors.to_numpy(),
                color=colour,
                height=0.6,
                error_kw={"elinewidth": 0.6, "capsize": 1.5},
            )
        else:
            _empty(ax, "not available for this grid")
        ax.set_yticks(y, datasets)
        ax.invert_yaxis()
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_xlabel(label)
    axes[0].set_title(f"{attention} attention")
    return fig
