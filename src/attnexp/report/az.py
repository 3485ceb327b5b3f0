"""Abnar & Zuidema tables and figures, moved unchanged from `attnexp.analyses.az.run` (analyses never draw)."""

from pathlib import Path

import numpy as np
import pandas as pd

from attnexp.analyses.az.run import METHODS
from attnexp.io import write_csv, write_text


def paper_tables(summaries: list, recoveries: list, gradient: str, outputs: dict) -> None:
    """Combine per-dataset results; write the paper-layout tables (rows Raw/Rollout/Flow, columns L1..L6)."""
    summary = pd.concat([pd.read_csv(p) for p in summaries], ignore_index=True)
    recovery = pd.concat([pd.read_csv(p) for p in recoveries], ignore_index=True)
    write_csv(outputs["summary"], summary)
    write_csv(outputs["recovery"], recovery)
    lines = ["# Abnar & Zuidema: Spearman's rho between attention and importance (mean ± std over examples)", ""]
    for task, group in summary.groupby("task", sort=False):
        for importance, title in (("blankout", "blank-out"), (gradient, f"input gradients ({gradient})")):
            part = group[group["importance"] == importance]
            cell = part.assign(cell=[f"{m:.2f} ± {s:.2f}" for m, s in zip(part["mean"], part["std"], strict=True)])
            grid = cell.pivot(index="method", columns="layer", values="cell").reindex(list(METHODS))
            grid.columns = [f"L{c}" for c in grid.columns]
            lines += [
                f"## {task}: {title} (n = {int(part['n'].max())}, n_nan = {int(part['n_nan'].max())})",
                "",
                grid.to_markdown(),
                "",
            ]
        found = recovery[recovery["task"] == task]
        if len(found):
            layered = found[found["layer"] > 0].pivot(index="method", columns="layer", values="top1").reindex(list(METHODS))
            layered.columns = [f"L{c}" for c in layered.columns]
            lines += [
                f"## {task}: ground truth found (subject or planted cues; top-1 accuracy among words)",
                "",
                layered.round(3).to_markdown(),
                "",
                found[found["layer"] == 0][["method", "top1", "mrr", "share"]].round(3).to_markdown(index=False),
                "",
            ]
    write_text(outputs["tables"], "\n".join(lines))


def plot_correlation_curves(summary_path, gradient: str, path) -> None:
    """Mean rho per layer with ±std bands, one line per method; one panel per importance, one row per task."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnexp.io import atomic_path

    summary = pd.read_csv(summary_path)
    tasks = list(dict.fromkeys(summary["task"]))
    fig, axes = plt.subplots(len(tasks), 2, figsize=(9, 3 * len(tasks)), squeeze=False, sharey=True)
    for row, task in enumerate(tasks):
        for col, importance in enumerate(("blankout", gradient)):
            ax = axes[row, col]
            for method in METHODS:
                part = summary[(summary["task"] == task) & (summary["importance"] == importance) & (summary["method"] == method)]
                ax.plot(part["layer"], part["mean"], marker="o", label=method)
                ax.fill_between(part["layer"], part["mean"] - part["std"], part["mean"] + part["std"], alpha=0.15)
            ax.axhline(0, color="grey", lw=0.5)
            ax.set_title(f"{task}: {importance}")
            ax.set_xlabel("layer")
            ax.set_ylabel("Spearman's rho")
    axes[0, 0].legend()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)


def plot_cls_maps(relevance_path, instances_dir, path) -> None:
    """CLS relevance maps across layers (A&Z Figs. 2-3) for two examples picked by id: the first correctly
    classified and the first misclassified test example (in id order, among the longer half), one heatmap per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnexp.data.preprocess import load_preprocessed
    from attnexp.io import atomic_path

    relevance = pd.read_parquet(relevance_path).sort_values("instance_id", kind="stable")
    relevance = relevance[relevance["length"] >= relevance["length"].median()]
    vocab = load_preprocessed(instances_dir)[1]["vocab"]
    correct = relevance[relevance["label"] == relevance["predicted"]].head(1)
    wrong = relevance[relevance["label"] != relevance["predicted"]].head(1)
    picked = pd.concat([correct, wrong])
    fig, axes = plt.subplots(len(picked), 3, figsize=(15, 2.8 * len(picked)), squeeze=False)
    for row, example in enumerate(picked.itertuples()):
        words = [vocab[t] for t in example.tokens]
        words[0] = "[CLS]"
        subject = set(example.subject)
        status = "correct" if example.label == example.predicted else "misclassified"
        for col, method in enumerate(METHODS):
            values = np.array([list(v) for v in getattr(example, method)])
            ax = axes[row, col]
            ax.imshow(values, aspect="auto", cmap="Blues", vmin=0, vmax=values.max(), origin="lower")
            labels = [f"*{w}*" if i in subject else w for i, w in enumerate(words)]
            ax.set_xticks(range(len(words)), labels, rotation=90, fontsize=7)
            ax.set_yticks(range(len(values)), [f"L{k + 1}" for k in range(len(values))])
            ax.set_title(f"{method} ({example.instance_id}, {status})", fontsize=9)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)


def write_report(inputs: dict, outputs: dict, gradient: str) -> None:
    """All A&Z tables and figures in one job: combined tables, the correlation curves and one [CLS] map per
    (dataset, seed); `inputs` lists summaries, recoveries and relevance files in the same order as the maps."""
    paper_tables(list(inputs["summaries"]), list(inputs["recoveries"]), gradient, outputs)
    plot_correlation_curves(outputs["summary"], gradient, outputs["curves"])
    instances = list(inputs["instances"])
    relevance = list(inputs["relevance"])
    maps = [outputs["maps"]] if isinstance(outputs["maps"], str) else list(outputs["maps"])
    for index, (relevance_path, map_path) in enumerate(zip(relevance, maps, strict=True)):
        plot_cls_maps(relevance_path, Path(instances[index]).parent, map_path)
