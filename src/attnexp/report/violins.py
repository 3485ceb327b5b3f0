"""Violins by max-attention bin, shared by J&W's permutation and adversary figures and W&P's variance figure, so
that the bins run in one order everywhere ([0, .25) on top) and a near-empty violin says how few it draws."""

import pandas as pd
from matplotlib.transforms import blended_transform_factory

from attnexp.report.style import MAX_ATTENTION_LABELS, place_legend

FEW = 5  # violins drawn from fewer instances than this carry an "n = k" note
WIDTH = 0.8  # seaborn's violin width per bin (split between the dodged classes)


def binned_violins(ax, frame: pd.DataFrame, value: str, palette: dict, cut: float = 0.02) -> None:
    """Horizontal violins: y = max-attention bin (`bin`, in MAX_ATTENTION_LABELS order from the top), x = `value`,
    hue = `class` (dodged), quartile lines inside; "n = k" beside each violin of fewer than FEW instances and
    "no instances" in an empty bin."""
    import seaborn as sns  # here: seaborn adds ~1.3 s to the start of every job that imports this module

    hue_order = [name for name in palette if name in set(frame["class"])]
    sns.violinplot(
        frame,
        x=value,
        y="bin",
        hue="class",
        order=list(MAX_ATTENTION_LABELS),
        hue_order=hue_order,
        orient="h",
        palette=palette,
        inner="quart",
        cut=cut,
        density_norm="width",
        linewidth=0.6,
        ax=ax,
        dodge=len(hue_order) > 1,
        legend="brief",
        linecolor="black",
        inner_kws={"linewidth": 0.6},
    )
    for collection in ax.collections:
        collection.set_alpha(0.75)
    place_legend(ax)
    counts = frame.groupby([frame["bin"].astype(str), frame["class"]], observed=True).size()
    right_edge = blended_transform_factory(ax.transAxes, ax.transData)
    for row, label in enumerate(MAX_ATTENTION_LABELS):  # in bin order: a set's order would vary with the hash seed
        if label not in set(frame["bin"].astype(str)):
            ax.text(0.0, row, "  no instances", va="center", fontsize=6, color="0.5")
            continue
        for slot, name in enumerate(hue_order):
            n = int(counts.get((label, name), 0))
            if 0 < n < FEW:
                offset = (slot + 0.5) * WIDTH / len(hue_order) - WIDTH / 2 if len(hue_order) > 1 else 0.0
                ax.text(0.98, row + offset, f"n = {n}", transform=right_edge, ha="right", va="center", fontsize=5, color="0.3")
