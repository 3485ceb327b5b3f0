"""W&P figures: seed (or adversary) violin and scatter plots (§3.2) and the JSD-TVD plane (§4)."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from attnexp.io import atomic_path  # noqa: E402

PALETTE = {0: "#7570b3", 1: "#d95f02"}
BIN_EDGES = [0.0, 0.25, 0.5, 0.75, 1.0001]
BIN_LABELS = ["[0.00, 0.25)", "[0.25, 0.50)", "[0.50, 0.75)", "[0.75, 1.00]"]


def _save(figure, paths: list) -> None:
    for path in paths:
        with atomic_path(path) as tmp:
            figure.savefig(tmp, format=str(path).rsplit(".", 1)[-1], bbox_inches="tight", dpi=150)
    plt.close(figure)


def seed_violin(variance: pd.DataFrame, paths: list, compared: str = "seeds", title: str = "") -> None:
    """x = JSD to the base (attn_diff), y = max-attention bin, hue = predicted class, quartiles inside."""
    frame = variance.assign(
        bin=pd.cut(variance["max_attn"], BIN_EDGES, right=False, labels=BIN_LABELS),
        predicted=variance["class"].astype(int),
    )
    figure, axis = plt.subplots(figsize=(5, 5))
    sns.violinplot(
        data=frame,
        x="attn_diff",
        y="bin",
        hue="predicted",
        palette=PALETTE,
        dodge=True,
        inner="quart",
        cut=0.02,
        orient="h",
        order=BIN_LABELS[::-1],
        density_norm="width",
        ax=axis,
    )
    axis.set(xlim=(-0.05, 0.7), xlabel=f"JSD ({compared} vs base)", ylabel="Max Attention", title=title)
    axis.set_box_aspect(1)
    _save(figure, paths)


def seed_scatter(variance: pd.DataFrame, paths: list, compared: str = "seeds", title: str = "") -> None:
    """x = JSD to the base, y = output difference, hue and marker = predicted class."""
    frame = variance.assign(predicted=variance["class"].astype(int))
    figure, axis = plt.subplots(figsize=(5, 5))
    sns.scatterplot(
        data=frame,
        x="attn_diff",
        y="y_diff",
        hue="predicted",
        style="predicted",
        palette=PALETTE,
        s=10,
        alpha=0.7,
        linewidth=0,
        ax=axis,
    )
    axis.set(xlim=(-0.05, 0.7), ylim=(-0.05, 1.05), xlabel=f"JSD ({compared} vs base)", ylabel="Output Difference", title=title)
    axis.set_box_aspect(1)
    _save(figure, paths)


def jsd_tvd_figure(points: pd.DataFrame, paths: list, title: str = "") -> None:
    """Mean JSD (x) vs mean TVD (y) to the base: seeds ▲, uniform ■, adversaries + with their lambda,
    the J&W per-instance adversary as a dotted vertical line at its mean JSD."""
    figure, axis = plt.subplots(figsize=(5, 5))
    styles = {
        "seed": ("^", "#1b9e77", "seeds"),
        "uniform": ("s", "#7570b3", "uniform"),
        "adversary": ("+", "#d95f02", "adversary"),
    }
    for kind, (marker, color, label) in styles.items():
        part = points[points["model"] == kind]
        if len(part):
            axis.scatter(part["jsd"], part["tvd"], marker=marker, color=color, label=label, s=60)
        if kind == "adversary":
            for row in part.itertuples():
                axis.annotate(f"λ={row.label}", (row.jsd, row.tvd), textcoords="offset points", xytext=(4, 4), fontsize=7)
    for row in points[points["model"] == "jw_adversary"].itertuples():
        axis.axvline(row.jsd, linestyle=":", color="black", label="J&W per-instance adversary")
    axis.axvline(math.log(2), color="grey", linewidth=0.8, label="ln 2")
    top = max(0.05, float(np.nanmax(points["tvd"])) * 1.15) if len(points) else 1.0
    axis.set(xlim=(0, 0.7), ylim=(0, top), xlabel="Mean JSD from base attention", ylabel="Mean TVD from base output", title=title)
    axis.set_box_aspect(1)
    axis.legend(fontsize=7, loc="upper left")
    _save(figure, paths)


def variance_figures(variance_path, outputs: dict, compared: str = "seeds", title: str = "") -> None:
    """Violin and scatter plots from a seed_variance.parquet (outputs: violin_*, scatter_* by extension)."""
    variance = pd.read_parquet(variance_path)
    seed_violin(variance, [v for k, v in outputs.items() if k.startswith("violin")], compared, title)
    seed_scatter(variance, [v for k, v in outputs.items() if k.startswith("scatter")], compared, title)


def jsd_tvd_figure_from(points_path, paths: list, title: str = "") -> None:
    jsd_tvd_figure(pd.read_csv(points_path, dtype={"label": str}), paths, title)
