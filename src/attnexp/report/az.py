"""Abnar & Zuidema (2020) tables and figures, drawn from the analyses' files (`attnexp.analyses.az.run`).

Tables (all datasets): Spearman's rho between relevance and importance per layer (the paper's Tables 1-2
layout: rows Raw / Rollout / Flow, columns L1..L6), and how well each method finds the ground truth (the
subject on agreement data). Figures: rho against layer per dataset, and [CLS] relevance maps across layers
(Figs. 2-3) per trained model. Nothing here computes an analysis; every number comes from the CSV/parquet files.
"""

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from attnexp.analyses.az import GRADIENTS, METHODS
from attnexp.io import read_csv, read_json, read_parquet
from attnexp.report.style import FigureStyle, class_colours, new_figure, paper_style, save_figure
from attnexp.report.tables import dataset_order, write_table

METHOD_NAMES = {"raw": "Raw", "rollout": "Rollout", "flow": "Flow"}
MEASURE_NAMES = {
    "blankout": "blank-out",
    "grad": "gradient",
    "grad_x_input": "gradient × input",
    "grad_l2": "gradient L2 norm",
}
TABLES = ("correlations", "subject_recovery", "importance_recovery")
CAPTIONS = {
    "correlations": "Abnar and Zuidema Tables 1-2 analogue: Spearman's rho between the [CLS] relevance of raw attention, "
    "rollout and flow at each layer and token importance (blank-out; the input-gradient measure each model reports: "
    "gradient × input |Σ_d e_jd ∂s/∂e_jd| for our pre-LayerNorm Transformer, whose gradient-only form |Σ_d ∂s/∂e_jd| is "
    "identically zero; the gradient-only form for Hugging Face BERT-family models, as the authors), mean ± std over "
    "test examples "
    "(with several seeds: the mean over seeds of both, and the std of the per-seed means); n examples, NaN rho = "
    "examples with a constant vector (no ranking). Flow equal across upper layers is a property of max-flow, not a "
    "bug: every token's flow has reached a bound that does not depend on the layer (the capacity 1 leaving [CLS], or "
    "its first-layer column sum).",
    "subject_recovery": "Ground truth found by relevance: top-1 accuracy (the highest-relevance word is the subject or "
    "a planted cue) per method and layer, among the words of each test example.",
    "importance_recovery": "Ground truth found by importance: top-1 accuracy, mean reciprocal rank and relevance share "
    "of the subject (or planted cues) under blank-out and input-gradient importance.",
}
MAP_COLOURS = "Oranges"  # one sequential scale for relevance, as the J&W attention heatmaps


# --- tables ---


def _cell(mean: float, spread: float, n_seeds: int, seed_std: float, digits: int) -> str:
    if not np.isfinite(mean):
        return "–"
    text = f"{mean:.{digits}f}" + (f" ± {spread:.{digits}f}" if np.isfinite(spread) else "")
    return text + (f" (seeds ± {seed_std:.{digits}f})" if n_seeds > 1 else "")


def _layer_grid(part: pd.DataFrame, values: pd.Series) -> pd.DataFrame:
    """Rows = methods (raw, rollout, flow), columns L1..Lk."""
    grid = part.assign(cell=values.to_numpy()).pivot(index="method", columns="layer", values="cell")
    grid = grid.reindex([m for m in METHODS if m in grid.index])
    grid.columns = [f"L{c}" for c in grid.columns]
    return grid


def reported_gradient(summary: pd.DataFrame, task: str, gradients: Mapping[str, str] | None) -> str:
    """The input-gradient measure a task's rows show: `gradients[task]` (the plan's, `Plan.az_gradient`), else the
    first of GRADIENTS its summary holds."""
    if gradients and task in gradients:
        return gradients[task]
    held = set(summary.loc[summary["task"] == task, "importance"])
    return next((g for g in GRADIENTS if g in held), GRADIENTS[0])


def correlation_display(summary: pd.DataFrame, gradients: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Paper layout: one row per dataset x importance (blank-out, the task's gradient measure) x method."""
    rows = []
    for task in dataset_order(summary["task"]):
        for importance in ("blankout", reported_gradient(summary, task, gradients)):
            part = summary[(summary["task"] == task) & (summary["importance"] == importance)]
            if not len(part):
                continue
            cells = pd.Series([_cell(r.mean, r.std, r.n_seeds, r.mean_seed_std, 2) for r in part.itertuples()], index=part.index)
            grid = _layer_grid(part, cells)
            counts = part.groupby("method")[["n", "n_nan"]].max()
            for method, layers in grid.iterrows():
                rows.append(
                    {
                        "Dataset": task,
                        "Importance": MEASURE_NAMES[importance],
                        "Method": METHOD_NAMES[method],
                        **layers.to_dict(),
                        "n": int(counts.loc[method, "n"]),
                        "NaN rho": int(counts.loc[method, "n_nan"]),
                    }
                )
    return pd.DataFrame(rows)


def subject_recovery_display(recovery: pd.DataFrame) -> pd.DataFrame:
    """Top-1 accuracy per dataset x method (rows) and layer (columns)."""
    rows = []
    layered = recovery[recovery["layer"] > 0]
    for task in dataset_order(layered["task"]):
        part = layered[layered["task"] == task]
        cells = pd.Series([_cell(r.top1, np.nan, r.n_seeds, r.top1_seed_std, 3) for r in part.itertuples()], index=part.index)
        for method, layers in _layer_grid(part, cells).iterrows():
            rows.append({"Dataset": task, "Method": METHOD_NAMES[method], **layers.to_dict()})
    return pd.DataFrame(rows)


def importance_recovery_display(recovery: pd.DataFrame) -> pd.DataFrame:
    """Top-1, MRR and share of the ground truth per dataset x importance measure."""
    part = recovery[recovery["layer"] == 0]
    order = {task: i for i, task in enumerate(dataset_order(part["task"]))}
    part = part.sort_values("task", key=lambda t: t.map(order), kind="stable")
    return pd.DataFrame(
        {
            "Dataset": part["task"],
            "Importance": part["method"].map(MEASURE_NAMES),
            "top-1": [_cell(r.top1, np.nan, r.n_seeds, r.top1_seed_std, 3) for r in part.itertuples()],
            "MRR": part["mrr"].map("{:.3f}".format),
            "share": part["share"].map("{:.3f}".format),
        }
    )


def _table_paths(outputs: Mapping[str, str | Path], stem: str) -> dict[str, str | Path]:
    """One table's {format: path} out of the rule's `{stem}_{format}` outputs."""
    return {key.removeprefix(f"{stem}_"): path for key, path in outputs.items() if key.startswith(f"{stem}_")}


def write_az_tables(
    *,
    summary: str | Path,
    recovery: str | Path,
    gradients: Mapping[str, str] | None,
    outputs: Mapping[str, str | Path],
) -> None:
    """The three A&Z tables (CSV + Markdown + LaTeX) from the across-seed summaries of `combine_runs`; `gradients`:
    task -> the input-gradient measure its correlation rows show.

    `outputs` keys: `{stem}_{csv,md,tex,html}` for every stem in TABLES.
    """
    correlations = read_csv(summary)
    found = read_csv(recovery)
    write_table(
        correlations,
        _table_paths(outputs, "correlations"),
        caption=CAPTIONS["correlations"],
        display=correlation_display(correlations, gradients),
    )
    write_table(
        found[found["layer"] > 0],
        _table_paths(outputs, "subject_recovery"),
        caption=CAPTIONS["subject_recovery"],
        display=subject_recovery_display(found),
    )
    write_table(
        found[found["layer"] == 0],
        _table_paths(outputs, "importance_recovery"),
        caption=CAPTIONS["importance_recovery"],
        display=importance_recovery_display(found),
    )


# --- figures ---


def correlation_figure(summary: pd.DataFrame, dataset: str, gradient: str, palette: str, width: float) -> Figure:
    """Mean rho per layer with ±std bands, one line per method; left blank-out, right the gradient."""
    colours = class_colours(METHODS, palette)
    fig, axes = new_figure(width, aspect=0.5, ncols=2, sharey=True, squeeze=False)
    part = summary[summary["task"] == dataset]
    for ax, importance in zip(axes[0], ("blankout", gradient), strict=True):
        for method in METHODS:
            line = part[(part["importance"] == importance) & (part["method"] == method)]
            ax.plot(line["layer"], line["mean"], marker="o", markersize=3, color=colours[method], label=METHOD_NAMES[method])
            ax.fill_between(
                line["layer"], line["mean"] - line["std"], line["mean"] + line["std"], color=colours[method], alpha=0.15, lw=0
            )
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_title(MEASURE_NAMES[importance])
        ax.set_xlabel("layer")
        ax.set_xticks(sorted(part["layer"].unique()))  # whole layers only
    axes[0, 0].set_ylabel("Spearman's ρ")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(METHODS))
    fig.suptitle(dataset, fontsize=8)
    return fig


def write_correlation_figure(
    *,
    summary: str | Path,
    dataset: str,
    gradient: str,
    style: FigureStyle,
    outputs: Mapping[str, str | Path],
) -> None:
    """rho against layer for one dataset (from the across-seed summary); `outputs`: png, pdf."""
    with paper_style(style):
        fig = correlation_figure(read_csv(summary), dataset, gradient, style.palette, style.width)
        save_figure(fig, [outputs["png"], outputs["pdf"]], dpi=style.dpi)


def picked_examples(relevance: pd.DataFrame) -> pd.DataFrame:
    """The first correctly classified and the first misclassified test example by id, among the longer half."""
    relevance = relevance.sort_values("instance_id", kind="stable")
    relevance = relevance[relevance["length"] >= relevance["length"].median()]
    correct = relevance[relevance["label"] == relevance["predicted"]].head(1)
    wrong = relevance[relevance["label"] != relevance["predicted"]].head(1)
    return pd.concat([correct, wrong])


def cls_map_figure(relevance: pd.DataFrame, vocab: list[str], width: float) -> Figure:
    """[CLS] relevance maps across layers (A&Z Figs. 2-3), one heatmap per method and picked example, all on one
    colour scale (0 to the largest value shown; colour bar), so that near-uniform raw attention looks pale rather
    than maximal; ground-truth tokens (the subject) are starred."""
    picked = picked_examples(relevance)
    rows = max(len(picked), 1)
    fig, axes = new_figure(2 * width, aspect=0.3 * rows, nrows=rows, ncols=3, squeeze=False)
    if not len(picked):
        axes[0, 0].text(0.5, 0.5, "no test examples", ha="center", va="center")
        for ax in axes[0]:
            ax.set_axis_off()
        return fig
    maps = [[np.array([list(v) for v in getattr(example, method)]) for method in METHODS] for example in picked.itertuples()]
    vmax = max(float(m.max(initial=0)) for row in maps for m in row) or 1.0  # one scale for every panel
    for row, example in enumerate(picked.itertuples()):
        words = [vocab[t] for t in example.tokens]
        words[0] = "[CLS]"
        subject = set(example.subject)
        status = "correct" if example.label == example.predicted else "misclassified"
        for col, method in enumerate(METHODS):
            values = maps[row][col]
            ax = axes[row, col]
            image = ax.imshow(values, aspect="auto", cmap=MAP_COLOURS, vmin=0, vmax=vmax, origin="lower")
            labels = [f"*{w}*" if i in subject else w for i, w in enumerate(words)]
            ax.set_xticks(range(len(words)), labels, rotation=90, fontsize=5)
            ax.set_yticks(range(len(values)), [f"L{k + 1}" for k in range(len(values))], fontsize=5)
            if row == 0:
                ax.set_title(METHOD_NAMES[method])
        axes[row, 0].set_ylabel(f"{example.instance_id}\n({status})", fontsize=6)
    bar = fig.colorbar(image, ax=axes, shrink=0.8, aspect=30, pad=0.01)
    bar.set_label("relevance to [CLS] (one scale for every panel)", fontsize=6)
    bar.ax.tick_params(labelsize=5)
    return fig


def write_cls_maps(*, relevance: str | Path, meta: str | Path, style: FigureStyle, outputs: Mapping[str, str | Path]) -> None:
    """[CLS] maps of one trained Transformer from its relevance file; `meta` gives the vocabulary; `outputs`: png, pdf."""
    columns = ["instance_id", "length", "label", "predicted", "tokens", "subject", *METHODS]
    with paper_style(style):
        fig = cls_map_figure(read_parquet(relevance, columns=columns), read_json(meta)["vocab"], style.width)
        save_figure(fig, [outputs["png"], outputs["pdf"]], dpi=style.dpi)
