"""The Abnar & Zuidema stage: train the Transformer, read raw / rollout / flow relevance at every layer,
compute blank-out and gradient importance, correlate them (Spearman per example, §5), score how well each
method finds the subject on agreement data, and write the paper's tables and figures.
"""

import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.correlation import spearman_ragged
from attnexp.data.batching import sequential_batches
from attnexp.io import write_csv, write_parquet, write_text

METHODS = ("raw", "rollout", "flow")
IMPORTANCES = ("blankout", "grad", "grad_x_input")


def relevance_and_importance(model, rows: pd.DataFrame, options: dict, progress=print) -> pd.DataFrame:
    """Per example: raw / rollout / flow relevance [layers][n], blank-out and gradients [n], flow seconds."""
    from attnexp.analyses.az.flow import batch_flow
    from attnexp.analyses.az.importance import blank_out, input_gradients
    from attnexp.analyses.az.rollout import head_average, raw_relevance, relevance_rows, residual_augment, rollout

    model.eval()
    records = []
    for number, batch in enumerate(sequential_batches(rows, options["batch_size"])):
        start = time.perf_counter()
        lengths = batch.lengths
        with torch.no_grad():
            output = model(batch)
            maps = output.encoded.maps
            augmented = residual_augment(head_average(maps), options["rollout_residual"])
            raw = raw_relevance(maps, lengths, options["relevance_row"])
            roll = relevance_rows(rollout(augmented), lengths, options["relevance_row"])
        flow, seconds = batch_flow(
            augmented.double().numpy(),
            lengths.numpy(),
            row=options["relevance_row"],
            solver=options["flow_solver"],
            progress=False,
        )
        blank = blank_out(model, batch, options["score"])
        grad, grad_x_input = input_gradients(model, batch, options["score"])
        predicted = model.predict(output.logits)
        for i, instance_id in enumerate(batch.instance_ids):
            n = int(lengths[i])
            records.append(
                {
                    "instance_id": instance_id,
                    "length": n,
                    "label": int(batch.labels[i]),
                    "predicted": int(predicted[i]),
                    "tokens": batch.tokens[i, :n].tolist(),
                    "raw": [r[:n].tolist() for r in raw[i]],
                    "rollout": [r[:n].tolist() for r in roll[i]],
                    "flow": [r[:n].tolist() for r in flow[i]],
                    "blankout": blank[i, :n].tolist(),
                    "grad": grad[i, :n].tolist(),
                    "grad_x_input": grad_x_input[i, :n].tolist(),
                    "flow_seconds": float(seconds[i]),
                }
            )
        progress(
            f"batch {number + 1}: {batch.size} examples, {time.perf_counter() - start:.1f}s "
            f"(flow {seconds.mean():.3f}s per example)"
        )
    return pd.DataFrame(records)


def _padded(column: pd.Series, width: int) -> np.ndarray:
    out = np.zeros((len(column), width))
    for i, values in enumerate(column):
        out[i, : len(values)] = values
    return out


def correlations(relevance: pd.DataFrame, dataset: str, options: dict) -> pd.DataFrame:
    """Long table: example_id, task, layer, method, importance, rho, is_nan, n (Spearman, §5)."""
    lengths = relevance["length"].to_numpy()
    width = int(lengths.max())
    special = int(options["exclude_special"])
    starts, stops = np.full(len(lengths), special), lengths - special
    n_layers = len(relevance["raw"].iloc[0])
    parts = []
    for importance in IMPORTANCES:
        scores = _padded(relevance[importance], width)
        for method in METHODS:
            for layer in range(n_layers):
                values = _padded(relevance[method].map(lambda r, k=layer: r[k]), width)
                rho = spearman_ragged(values, scores, starts, stops, options["spearman"])
                parts.append(
                    pd.DataFrame(
                        {
                            "example_id": relevance["instance_id"],
                            "task": dataset,
                            "layer": layer + 1,
                            "method": method,
                            "importance": importance,
                            "rho": rho,
                            "is_nan": np.isnan(rho),
                            "n": stops - starts,
                        }
                    )
                )
    return pd.concat(parts, ignore_index=True)


def summarise_correlations(table: pd.DataFrame, options: dict) -> pd.DataFrame:
    """mean and population std of rho per task, method, importance and layer, with n and n_nan.

    NaN rho (a constant vector) counts as 0 (`nan_policy: zero`, the authors) or is dropped (`omit`);
    the quirk `cumulative_layer_lists` pools each layer with all layers below it, as the authors' logs do.
    """
    table = table.assign(value=table["rho"].fillna(0.0) if options["nan_policy"] == "zero" else table["rho"])
    rows = []
    for (task, method, importance), group in table.groupby(["task", "method", "importance"], sort=False):
        for layer in sorted(group["layer"].unique()):
            part = group[group["layer"] <= layer] if options["cumulative_layer_lists"] else group[group["layer"] == layer]
            values = part["value"].dropna().to_numpy()
            rows.append(
                {
                    "task": task,
                    "method": method,
                    "importance": importance,
                    "layer": layer,
                    "mean": float(values.mean()) if len(values) else float("nan"),
                    "std": float(values.std(ddof=0)) if len(values) else float("nan"),
                    "n": len(values),
                    "n_nan": int(part["is_nan"].sum()),
                }
            )
    return pd.DataFrame(rows)


def subject_recovery(relevance: pd.DataFrame, truth: pd.Series, dataset: str) -> pd.DataFrame:
    """How well each method (and importance) at each layer finds the ground truth among the words.

    `truth` lists token positions per example (the subject on agreement data, the planted cues on other
    generated data); examples without any are skipped. Only word positions (1 .. n-2) compete. top1: the
    highest-relevance word is a ground-truth token; mrr: mean reciprocal rank of the best-ranked one;
    share: mean relevance mass on ground-truth tokens among the words.
    """
    known = (truth.map(len) > 0).to_numpy()
    relevance, truth = relevance[known], truth[known]
    if not len(relevance):
        return pd.DataFrame(columns=["task", "method", "layer", "top1", "mrr", "share", "n"])
    lengths = relevance["length"].to_numpy()
    width = int(lengths.max())
    words = (np.arange(width)[None, :] >= 1) & (np.arange(width)[None, :] < lengths[:, None] - 1)
    target = np.zeros_like(words)
    for i, positions in enumerate(truth):
        target[i, list(positions)] = True
    target &= words
    rows = []

    def score(name: str, layer: int, values: np.ndarray) -> None:
        masked = np.where(words, values, -np.inf)
        best = np.where(target, masked, -np.inf).max(axis=1)
        rank = 1 + (np.where(target, -np.inf, masked) > best[:, None]).sum(axis=1)
        total = np.where(words, values, 0).sum(axis=1)
        mass = np.where(target, values, 0).sum(axis=1)
        share = np.divide(mass, total, out=np.zeros_like(mass), where=total > 0)
        rows.append(
            {
                "task": dataset,
                "method": name,
                "layer": layer,
                "top1": float((rank == 1).mean()),
                "mrr": float((1 / rank).mean()),
                "share": float(share.mean()),
                "n": len(lengths),
            }
        )

    for method in METHODS:
        for layer in range(len(relevance["raw"].iloc[0])):
            score(method, layer + 1, _padded(relevance[method].map(lambda r, k=layer: r[k]), width))
    for importance in IMPORTANCES:
        score(importance, 0, _padded(relevance[importance], width))
    return pd.DataFrame(rows)


def run_az_analysis(model_path, instances_dir, dataset: str, options: dict, outputs: dict, threads: int = 1) -> None:
    """Relevance, importance, correlations and subject recovery for one trained Transformer (test split)."""
    from attnexp.data.preprocess import load_preprocessed, split_frame
    from attnexp.models.checkpoint import load_model

    torch.set_num_threads(threads)
    instances, meta = load_preprocessed(instances_dir)
    model = load_model(model_path)
    test = split_frame(instances, "test")
    if options["n_examples"] and len(test) > options["n_examples"]:
        keep = np.sort(np.random.default_rng(options["sample_seed"]).choice(len(test), options["n_examples"], replace=False))
        test = test.iloc[keep].reset_index(drop=True)
    print(f"{dataset}: {len(test)} test examples, {model.config.n_layers} layers, options {options}")
    relevance = relevance_and_importance(model, test, options)
    relevance["subject"] = test["rationale"].map(list).to_numpy()
    table = correlations(relevance, dataset, options)
    summary = summarise_correlations(table, options)
    recovery = subject_recovery(relevance, test["rationale"].map(list), dataset)
    write_parquet(outputs["relevance"], relevance)
    write_parquet(outputs["correlations"], table)
    write_csv(outputs["summary"], summary)
    write_csv(outputs["recovery"], recovery)
    print(f"flow: {relevance['flow_seconds'].mean():.4f}s per example (mean), {relevance['flow_seconds'].sum():.1f}s total")
    print(summary.to_string())


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
