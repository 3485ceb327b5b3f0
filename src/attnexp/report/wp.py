"""W&P tables and figures: the uniform baseline (Table 2), the diagnostic MLP (Table 4), the consistent adversary
and its JSD/TVD points (§4), seed (or adversary) violin and scatter plots (§3.2) and the JSD-TVD plane (Fig. 3).

Everything here reads what the W&P jobs (attnexp.pipeline.wp) wrote (run metrics, seed_variance / adv_variance /
jsd_tvd_points parquet files) and only reshapes and draws it. Tables: CSV (full precision) + Markdown + LaTeX
(rounded) through `attnexp.report.tables.write_table`; figures: PNG + PDF in the project style (`attnexp.report.style`).
"""

import math
from collections.abc import Mapping, Sequence
from os import PathLike

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from attnexp.analyses.wp.settings import GUIDE_NAMES
from attnexp.io import read_json, read_parquet
from attnexp.report.style import (
    COLUMN_WIDTH,
    MAX_ATTENTION_BINS,
    MAX_ATTENTION_LABELS,
    PALETTES,
    FigureStyle,
    class_colours,
    new_figure,
    paper_style,
    place_legend,
    save_figure,
    set_title,
)
from attnexp.report.tables import write_table
from attnexp.report.violins import binned_violins

Path = str | PathLike
DIGITS = 3  # decimals in the Markdown and LaTeX tables
JSD_MAX = math.log(2)  # the natural-log JSD's maximum (attnexp.analyses.divergences)
JSD_AXIS_MARGIN = 1.04  # JSD axes end 4% beyond it (0.721)
METRIC_COLUMNS = ["f1_positive", "accuracy", "f1_macro", "roc_auc"]
ADVERSARIAL_COLUMNS = [
    "dataset",
    "lambda",
    "f1",
    "base_f1",
    "accuracy",
    "auc",
    "mean_tvd",
    "mean_jsd",
    "aggregation",
    "n",
    "best_epoch",
    "epochs_run",
]
CAPTIONS = {
    "uniform_table": "W&P Table 2 analogue: test F1 (positive class) of the base BiLSTM + tanh model and of the same "
    "model with uniform attention, with accuracy, macro F1 and ROC-AUC; J&W's reported F1 when a reference file is given.",
    "diagnostic_table": "W&P Table 4 analogue: test F1 (positive class) of a token-wise MLP whose attention is frozen "
    "to each guide (rows), per dataset (columns).",
    "adversarial_table": "W&P §4: the model-consistent adversary per dataset and λ: its test F1, accuracy and ROC-AUC "
    "next to the base F1, and the mean (or summed) TVD of outputs and JSD of attention from the base model.",
    "jsd_tvd_points": "W&P §4, Figure 3 points: mean test JSD of attention and TVD of outputs from the base model for "
    "every extra seed, the uniform model, each consistent adversary (label = λ) and J&W's per-instance adversary.",
}
DISPLAY_NAMES = {
    "dataset": "Dataset",
    "jw_reported_f1": "J&W F1 (reported)",
    "f1_positive_reproduced": "F1 base",
    "accuracy_reproduced": "Acc. base",
    "f1_macro_reproduced": "Macro F1 base",
    "roc_auc_reproduced": "AUC base",
    "f1_positive_uniform": "F1 uniform",
    "accuracy_uniform": "Acc. uniform",
    "f1_macro_uniform": "Macro F1 uniform",
    "roc_auc_uniform": "AUC uniform",
    "guide": "Guide",
    "lambda": "λ",
    "f1": "F1",
    "base_f1": "Base F1",
    "accuracy": "Acc.",
    "auc": "AUC",
    "mean_tvd": "TVD",
    "mean_jsd": "JSD",
    "aggregation": "Aggregation",
    "n": "n",
    "best_epoch": "Best epoch",
    "epochs_run": "Epochs",
    "model": "Model",
    "label": "Run",
    "jsd": "Mean JSD",
    "tvd": "Mean TVD",
}


# --- tables: frames ---


def _metrics_frame(metrics: Sequence[Mapping]) -> pd.DataFrame:
    return pd.DataFrame(list(metrics))


def uniform_table(
    base_metrics: Sequence[Mapping], uniform_metrics: Sequence[Mapping], reported: pd.Series | None = None
) -> pd.DataFrame:
    """W&P Table 2: per dataset J&W's reported F1 (`reported`: F1 by dataset, optional), the base and the uniform model."""
    base, uniform = _metrics_frame(base_metrics), _metrics_frame(uniform_metrics)
    columns = ["dataset", *METRIC_COLUMNS]
    table = base[columns].merge(uniform[columns], on="dataset", suffixes=("_reproduced", "_uniform"))
    table.insert(1, "jw_reported_f1", table["dataset"].map(pd.Series(dtype=float) if reported is None else reported))
    return table


def diagnostic_table(metrics: Sequence[Mapping]) -> pd.DataFrame:
    """W&P Table 4: positive-class F1 per guide (rows) and dataset (columns)."""
    frame = _metrics_frame(metrics)
    frame["guide"] = frame["variant"].map(GUIDE_NAMES)
    table = frame.pivot(index="guide", columns="dataset", values="f1_positive").reindex(list(GUIDE_NAMES.values()))
    return table.dropna(how="all").reset_index()


def adversarial_table(adversary_metrics: Sequence[Mapping], base_metrics: Sequence[Mapping]) -> pd.DataFrame:
    """Per dataset and lambda: the adversary's F1/accuracy/AUC next to the base F1, mean JSD and TVD to the base."""
    frame = _metrics_frame(adversary_metrics).rename(columns={"f1_positive": "f1", "roc_auc": "auc"})
    base = _metrics_frame(base_metrics).set_index("dataset")["f1_positive"]
    frame["base_f1"] = frame["dataset"].map(base)
    return frame[ADVERSARIAL_COLUMNS].sort_values(["dataset", "lambda"]).reset_index(drop=True)


def display(table: pd.DataFrame, digits: int = DIGITS) -> pd.DataFrame:
    """The paper layout of a W&P table: readable headers, floats rounded to `digits` (lambda in its shortest
    form), missing values as "–"."""
    shown = table.copy()
    for column in shown.columns:
        if pd.api.types.is_float_dtype(shown[column]):
            spec = "g" if column == "lambda" else f".{digits}f"
            shown[column] = [format(v, spec) if np.isfinite(v) else "–" for v in shown[column]]
        elif pd.api.types.is_object_dtype(shown[column]):
            shown[column] = shown[column].where(shown[column].notna(), "–")
    return shown.rename(columns=DISPLAY_NAMES)


def _write(table: pd.DataFrame, outputs: Mapping[str, Path], stem: str, caption: str | None = None) -> pd.DataFrame:
    write_table(table, outputs, caption=caption or CAPTIONS[stem], display=display(table))
    return table


# --- tables: entry points for the workflow (paths in, files out) ---


def write_uniform_table(
    *, base_metrics: Sequence[Path], uniform_metrics: Sequence[Path], reported: Path | None, outputs: Mapping[str, Path]
) -> pd.DataFrame:
    """uniform_table.{csv,md,tex}; `reported`: an optional CSV (dataset, f1) of J&W's Table 1 F1."""
    reference = pd.read_csv(reported).set_index("dataset")["f1"] if reported else None  # a user's file: no sidecar
    table = uniform_table([read_json(p) for p in base_metrics], [read_json(p) for p in uniform_metrics], reference)
    return _write(table, outputs, "uniform_table")


def write_diagnostic_table(*, metrics: Sequence[Path], outputs: Mapping[str, Path]) -> pd.DataFrame:
    return _write(diagnostic_table([read_json(p) for p in metrics]), outputs, "diagnostic_table")


def write_adversarial_table(
    *, adversary_metrics: Sequence[Path], base_metrics: Sequence[Path], outputs: Mapping[str, Path]
) -> pd.DataFrame:
    table = adversarial_table([read_json(p) for p in adversary_metrics], [read_json(p) for p in base_metrics])
    return _write(table, outputs, "adversarial_table")


def write_points_table(*, points: Path, dataset: str, outputs: Mapping[str, Path]) -> pd.DataFrame:
    """The JSD/TVD points of one dataset as a table."""
    return _write(read_parquet(points), outputs, "jsd_tvd_points", f"{CAPTIONS['jsd_tvd_points']} Dataset: {dataset}.")


# --- the catalog's builders (attnexp.report.catalog): a table job's files and settings in, the table written ---


def uniform_table_job(*, inputs: Mapping, outputs: Mapping, settings) -> pd.DataFrame:
    return write_uniform_table(
        base_metrics=inputs["base"], uniform_metrics=inputs["uniform"], reported=settings.reported, outputs=outputs
    )


def diagnostic_table_job(*, inputs: Mapping, outputs: Mapping, settings) -> pd.DataFrame:
    return write_diagnostic_table(metrics=inputs["metrics"], outputs=outputs)


def adversarial_table_job(*, inputs: Mapping, outputs: Mapping, settings) -> pd.DataFrame:
    return write_adversarial_table(adversary_metrics=inputs["adversaries"], base_metrics=inputs["base"], outputs=outputs)


def points_table_job(*, inputs: Mapping, outputs: Mapping, settings) -> pd.DataFrame:
    return write_points_table(points=inputs["points"], dataset=settings.dataset, outputs=outputs)


# --- figures ---


def _classes(variance: pd.DataFrame, classes: Sequence[str] | None = None) -> pd.Series:
    """Predicted class (from the base run's p) as the hue label: its name in `classes` (the dataset's), else 0/1."""
    index = variance["class"].astype(int)
    return index.map(lambda i: str(classes[i]) if classes is not None and i < len(classes) else str(i))


def _class_names(classes: Sequence[str] | None) -> list[str]:
    return [str(c) for c in classes] if classes is not None else ["0", "1"]


def seed_violin(
    variance: pd.DataFrame,
    compared: str = "seeds",
    title: str = "",
    palette: str = "spec",
    width: float = COLUMN_WIDTH,
    classes: Sequence[str] | None = None,
) -> Figure:
    """x = JSD to the base (attn_diff), y = max-attention bin in J&W's order ([0, .25) on top), hue = predicted
    class (named by `classes`), quartiles inside; "n = k" on near-empty violins (`report.violins`)."""
    frame = variance.assign(
        bin=pd.cut(variance["max_attn"], list(MAX_ATTENTION_BINS), right=False, labels=list(MAX_ATTENTION_LABELS)),
        **{"class": _classes(variance, classes)},
    )
    fig, ax = new_figure(width)
    binned_violins(ax, frame, "attn_diff", class_colours(_class_names(classes), palette))
    ax.set(xlim=jsd_limits(frame["attn_diff"]), xlabel=f"JSD ({compared} vs base)", ylabel="Max attention")
    set_title(fig, title)
    return fig


def seed_scatter(
    variance: pd.DataFrame,
    compared: str = "seeds",
    title: str = "",
    palette: str = "spec",
    width: float = COLUMN_WIDTH,
    classes: Sequence[str] | None = None,
) -> Figure:
    """x = JSD to the base, y = output difference, hue and marker = predicted class.

    y spans W&P's [-0.05, 1.05] when some output difference exceeds half of it; otherwise it is fitted to the data
    (`output_difference_limits`), where the paper's axis would squash every point onto the floor."""
    frame = variance.assign(predicted=_classes(variance, classes))
    colours = class_colours(_class_names(classes), palette)
    hue_order = [c for c in colours if c in set(frame["predicted"])]
    import seaborn as sns

    fig, ax = new_figure(width)
    sns.scatterplot(
        data=frame,
        x="attn_diff",
        y="y_diff",
        hue="predicted",
        style="predicted",
        hue_order=hue_order,
        style_order=hue_order,
        palette=colours,
        s=8,
        alpha=0.7,
        linewidth=0,
        ax=ax,
    )
    place_legend(ax)
    ax.set(
        xlim=jsd_limits(frame["attn_diff"]),
        ylim=output_difference_limits(frame["y_diff"]),
        xlabel=f"JSD ({compared} vs base)",
        ylabel="Output difference",
    )
    set_title(fig, title)
    return fig


def jsd_limits(jsd: pd.Series, low: float = -0.05) -> tuple[float, float]:
    """x-limits of a JSD axis: from `low` to 4% beyond the maximum, ln 2 (natural log), where the adversaries'
    and the near-uniform runs' points crowd (a data point past ln 2, numerical noise, moves the end with it), so no
    marker sits on the frame."""
    largest = float(np.nanmax(jsd)) if len(jsd) and np.isfinite(jsd).any() else 0.0
    return low, JSD_AXIS_MARGIN * max(JSD_MAX, largest)


def output_difference_limits(y_diff: pd.Series) -> tuple[float, float]:
    """y-limits of the variance scatter: the paper's (-0.05, 1.05), or fitted to small differences (top 15% above
    the largest, at least 0.01, with the same 5% margin below 0)."""
    largest = float(np.nanmax(y_diff)) if len(y_diff) and np.isfinite(y_diff).any() else 1.0
    if largest > 0.5:
        return -0.05, 1.05
    top = max(largest * 1.15, 0.01)
    return -0.05 * top, top


def jsd_tvd_figure(points: pd.DataFrame, title: str = "", palette: str = "spec", width: float = COLUMN_WIDTH) -> Figure:
    """Mean JSD (x) vs mean TVD (y) to the base: seeds ▲, uniform ■, adversaries + with their lambda,
    the J&W per-instance adversary as a dotted vertical line at its mean JSD."""
    first, second, third = PALETTES[palette]
    styles = {"seed": ("^", third, "seeds"), "uniform": ("s", first, "uniform"), "adversary": ("+", second, "adversary")}
    fig, ax = new_figure(width)
    for kind, (marker, colour, label) in styles.items():
        part = points[points["model"] == kind]
        if len(part):
            ax.scatter(part["jsd"], part["tvd"], marker=marker, color=colour, label=label, s=30)
    for row in points[points["model"] == "jw_adversary"].itertuples():
        ax.axvline(row.jsd, linestyle=":", color="black", linewidth=0.8, label="J&W per-instance adversary")
    ax.axvline(math.log(2), color="0.6", linewidth=0.6, label="ln 2")
    top = max(0.05, float(np.nanmax(points["tvd"])) * 1.15) if len(points) else 1.0
    ax.set(
        xlim=jsd_limits(points["jsd"], 0.0),
        ylim=(0, top),
        xlabel="Mean JSD from base attention",
        ylabel="Mean TVD from base output",
    )
    if len(points[points["model"] == "adversary"]):
        label_adversaries(ax, points[points["model"] == "adversary"], top)
    ax.legend(loc="best")  # not over the seeds' and uniform's points, which often sit near JSD 0
    set_title(fig, title)
    return fig


def label_adversaries(ax, adversaries: pd.DataFrame, top: float, near: float = 0.04) -> None:
    """One "λ=…" label per group of adversaries whose points nearly coincide (within `near` of the axes' size:
    "λ=0.1, 1"), each label below the previous one where they would overlap."""
    width = ax.get_xlim()[1] - ax.get_xlim()[0]
    groups: list[list] = []
    for row in adversaries.sort_values(["jsd", "tvd"], kind="stable").itertuples():
        for group in groups:
            if abs(row.jsd - group[0].jsd) <= near * width and abs(row.tvd - group[0].tvd) <= near * top:
                group.append(row)
                break
        else:
            groups.append([row])
    placed: list[tuple[float, float, int]] = []  # (x, y, lines down) of the labels so far
    for group in groups:
        x, y = group[0].jsd, group[0].tvd
        down = sum(1 for px, py, _ in placed if abs(px - x) <= 0.15 * width and abs(py - y) <= 0.06 * top)
        text = "λ=" + ", ".join(str(row.label) for row in group)
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(3, 3 - 8 * down), fontsize=6)
        placed.append((x, y, down))


# --- figures: entry points for the workflow (paths in, PNG + PDF out) ---


def draw_variance_figures(
    *,
    variance: Path,
    violin: Sequence[Path],
    scatter: Sequence[Path],
    compared: str,
    title: str,
    style: FigureStyle,
    classes: Sequence[str] | None = None,
) -> None:
    """Violin and scatter plots from a seed_variance (or adv_variance) parquet file, each to every path given;
    `classes`: the dataset's class names (meta.json)."""
    frame = read_parquet(variance)
    with paper_style(style):
        save_figure(seed_violin(frame, compared, title, style.palette, style.width, classes), violin, style.dpi)
        save_figure(seed_scatter(frame, compared, title, style.palette, style.width, classes), scatter, style.dpi)


def draw_jsd_tvd_figure(*, points: Path, paths: Sequence[Path], title: str, style: FigureStyle) -> None:
    """The JSD-TVD plane from a jsd_tvd_points parquet file."""
    with paper_style(style):
        save_figure(jsd_tvd_figure(read_parquet(points), title, style.palette, style.width), paths, style.dpi)
