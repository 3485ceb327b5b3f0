"""Abnar & Zuidema (2020) tables and figures, drawn from the analyses' files (`attnexp.analyses.az.measures`).

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
from attnexp.report.style import RC_PARAMS, FigureStyle, class_colours, new_figure, paper_style, save_figure
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


MAX_WORD_LABELS = 30  # x tick labels per [CLS] map at most: every k-th word (and every ground-truth word) beyond that
MAX_LABEL_CHARS = 12  # a longer word is cut with "…" in the tick labels


def reads_closing(relevance: pd.DataFrame, hint: bool = False) -> bool:
    """Whether the relevance rows end with the closing marker ([SEP] / [EOS] at position length-1), a special
    position the analyses keep out of the rankable tokens (`analyses.az.measures.correlations(closing=)`). The
    `{method}_sink` shares say it: they count that position exactly when the model reads it (`run.sink_mass`). A
    table without them, or one where both readings agree (nothing on the last position), takes `hint`
    (`write_cls_maps`: whether the run is a Hugging Face model's, which reads its [SEP]; our Transformer does not)."""
    sinks = [m for m in METHODS if f"{m}_sink" in relevance.columns]
    opening = with_closing = 0.0  # the largest disagreement of each reading with the recorded shares
    for example in relevance.itertuples() if sinks else ():
        n = int(example.length)
        for method in sinks:
            rows = np.array([list(r) for r in getattr(example, method)], dtype=float)[:, :n]
            recorded = np.asarray(list(getattr(example, f"{method}_sink")), dtype=float)
            total = rows.sum(-1)
            known = (total > 0) & np.isfinite(recorded)
            if n < 2 or not known.any():
                continue
            opening = max(opening, float(np.abs(rows[known, 0] / total[known] - recorded[known]).max()))
            both = (rows[known, 0] + rows[known, n - 1]) / total[known]
            with_closing = max(with_closing, float(np.abs(both - recorded[known]).max()))
    if abs(opening - with_closing) < 1e-9:
        return hint
    return with_closing < opening


def word_shares(rows: np.ndarray, n: int, closing: bool, sink=None) -> tuple[np.ndarray, np.ndarray]:
    """One relevance map [layers, >= n] split as the analyses rank it: each row over the rankable tokens alone
    (positions 1 .. n-1, or .. n-2 where the closing marker is read), renormalised to sum to 1 (NaN where they
    carry nothing), and per layer the share of the row on the special positions ([CLS], and [SEP] where read):
    `sink` (the recorded `{method}_sink`) where given, else computed from the row."""
    rows = np.array([list(r)[:n] for r in rows], dtype=float).reshape(len(rows), -1)
    stop = n - int(closing and n > 1)
    words = rows[:, 1:stop]
    total, on_words = rows.sum(-1), words.sum(-1)
    shares = np.divide(words, on_words[:, None], out=np.full(words.shape, np.nan), where=on_words[:, None] > 0)
    if sink is None or len(sink) != len(rows):
        sink = np.divide(total - on_words, total, out=np.full(len(total), np.nan), where=total > 0)
    return shares, np.asarray(list(sink), dtype=float)


def word_labels(words: list[str], marked: set[int], most: int = MAX_WORD_LABELS) -> dict[int, str]:
    """Tick labels of a map's columns: every word when there are at most `most`, else every k-th (the smallest k
    that keeps at most `most`) and every `marked` column (the ground truth, starred); long words cut."""
    step = 1
    while len(set(range(0, len(words), step)) | marked) > most and step < len(words):
        step += 1
    shown = sorted(set(range(0, len(words), step)) | marked)
    cut = {i: w if len(w) <= MAX_LABEL_CHARS else w[: MAX_LABEL_CHARS - 1] + "…" for i, w in enumerate(words)}
    return {i: f"*{cut[i]}*" if i in marked else cut[i] for i in shown if i < len(words)}


def _layer_ticks(layers: int, height_pt: float, size: float) -> list[int]:
    """The layers labelled on a map's y axis: all where their labels fit the panel's height, else every k-th."""
    step = max(1, int(np.ceil(layers * 1.3 * size / max(height_pt, 1.0))))
    return list(range(0, layers, step))


def cls_map_figure(relevance: pd.DataFrame, vocab: list[str], width: float, closing: bool | None = None) -> Figure:
    """[CLS] relevance maps across layers (A&Z Figs. 2-3) of two picked examples, one map per method (rows: layers,
    columns: the rankable tokens). The special positions are kept apart, as the analyses keep them out of the
    rankings: [CLS] (position 0) and, where the relevance rows include it (`closing`; by default `reads_closing`),
    the closing [SEP]. Each row is renormalised over the words for the colour, and the share the row put on the
    specials is drawn beside its map (a narrow bar per layer, with its value). Every map is on one colour scale,
    from 0 to the largest word share shown (colour bar), so that near-uniform rows look pale rather than maximal.
    With more words than `MAX_WORD_LABELS`, every k-th is labelled; ground-truth tokens (the subject) are starred."""
    picked = picked_examples(relevance)
    if not len(picked):
        fig, axes = new_figure(2 * width, aspect=0.3, ncols=3, squeeze=False)
        axes[0, 0].text(0.5, 0.5, "no test examples", ha="center", va="center")
        for ax in axes[0]:
            ax.set_axis_off()
        return fig
    if closing is None:
        closing = reads_closing(relevance)
    tick_size, note_size = RC_PARAMS["xtick.labelsize"], RC_PARAMS["ytick.labelsize"]
    maps = []  # per example, per method: (word shares [layers, words], specials' share [layers])
    for example in picked.itertuples():
        n = int(example.length)
        sinks = [getattr(example, f"{m}_sink", None) for m in METHODS]
        maps.append([word_shares(getattr(example, m), n, closing, s) for m, s in zip(METHODS, sinks, strict=True)])
    layers = max(len(shares) for row in maps for shares, _ in row)
    panel = float(np.clip(0.13 * layers, 0.6, 1.1))  # inches per map: 9.4 pt per layer, up to 8 layers
    height = len(picked) * (len(METHODS) * panel + 1.1) + 0.6  # + the rotated words and a title per example
    fig, axes = new_figure(
        2 * width,
        aspect=height / (2 * width),
        nrows=len(picked) * len(METHODS),
        ncols=2,
        squeeze=False,
        gridspec_kw={"width_ratios": [1, 0.06]},
    )
    vmax = max((float(np.nanmax(s, initial=0)) for row in maps for s, _ in row if s.size), default=0) or 1.0
    specials = "[CLS] + closing marker" if closing else "[CLS]"
    for e, example in enumerate(picked.itertuples()):
        n = int(example.length)
        stop = n - int(closing and n > 1)
        words = [vocab[t] if 0 <= t < len(vocab) else str(t) for t in list(example.tokens)[1:stop]]
        subject = {int(i) - 1 for i in example.subject if 1 <= int(i) < stop}  # positions -> map columns
        labels = word_labels(words, subject)
        status = "correct" if example.label == example.predicted else "misclassified"
        for m, method in enumerate(METHODS):
            shares, sink = maps[e][m]
            if not words:  # nothing between the specials: one blank column
                shares = np.full((len(shares), 1), np.nan)
            ax, side = axes[e * len(METHODS) + m]
            image = ax.imshow(shares, aspect="auto", cmap=MAP_COLOURS, vmin=0, vmax=vmax, origin="lower", interpolation="none")
            shown = _layer_ticks(len(shares), panel * 72, tick_size)
            ax.set_yticks(shown, [f"L{k + 1}" for k in shown], fontsize=tick_size)
            ax.set_ylabel(METHOD_NAMES[method])
            ax.set_xticks(range(len(words)), minor=True)
            ax.tick_params(axis="x", which="minor", length=1.5)
            ax.set_xticks(list(labels))
            if m == len(METHODS) - 1:  # the words under the last map of the example (all share its columns)
                ax.set_xticklabels(list(labels.values()), rotation=90, fontsize=tick_size)
            else:
                ax.tick_params(axis="x", labelbottom=False)
            if not words:
                ax.text(0.5, 0.5, "no words", ha="center", va="center", transform=ax.transAxes)
            if m == 0:
                ax.set_title(f"{example.instance_id} ({status}), {len(words)} words", loc="left")
            side.barh(range(len(sink)), np.nan_to_num(sink), height=0.8, color="#d9d9d9")
            side.set_xlim(0, 1)
            side.set_ylim(ax.get_ylim())
            side.set_yticks([])
            side.set_xticks([])
            for spine in side.spines.values():
                spine.set_visible(False)
            for k in shown:  # the share on the specials at each labelled layer
                value = "n/a" if not np.isfinite(sink[k]) else f"{sink[k]:.2f}"
                side.text(0.5, k, value, ha="center", va="center", fontsize=note_size, transform=side.get_yaxis_transform())
            if m == 0:
                side.set_title("specials", fontsize=note_size)
    bar = fig.colorbar(image, ax=axes[:, 0].tolist(), location="bottom", shrink=0.5, aspect=40, pad=0.02)
    bar.set_label(
        "share of each row's relevance among the words (one scale for every map)\n"
        f"specials: the row's share on {specials}, left out of the map"
    )
    bar.ax.tick_params(labelsize=tick_size)
    return fig


def write_cls_maps(*, relevance: str | Path, meta: str | Path, style: FigureStyle, outputs: Mapping[str, str | Path]) -> None:
    """[CLS] maps of one trained Transformer from its relevance file; `meta` gives the vocabulary (and, for a Hugging
    Face run, `hf_model`: its model reads the closing [SEP], where the file has no `{method}_sink` to tell);
    `outputs`: png, pdf."""
    import pyarrow.parquet as pq

    stored = set(pq.read_schema(relevance).names)
    columns = ["instance_id", "length", "label", "predicted", "tokens", "subject", *METHODS]
    columns += [f"{m}_sink" for m in METHODS if f"{m}_sink" in stored]
    info = read_json(meta)
    with paper_style(style):
        table = read_parquet(relevance, columns=columns)
        fig = cls_map_figure(table, info["vocab"], style.width, closing=reads_closing(table, hint="hf_model" in info))
        save_figure(fig, [outputs["png"], outputs["pdf"]], dpi=style.dpi)
