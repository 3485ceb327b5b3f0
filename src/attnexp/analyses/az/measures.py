"""The Abnar & Zuidema analyses: read raw / rollout / flow relevance at every layer of a trained Transformer,
compute blank-out and gradient importance, correlate them (Spearman per example, §5), score how well each
method finds the subject on agreement data, and combine the per-seed summaries. Tables and figures are drawn
in `attnexp.report.az`.
"""

import time
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.az import IMPORTANCES, METHODS
from attnexp.analyses.correlation import spearman_ragged
from attnexp.data.batching import padded_rows, sequential_batches
from attnexp.models.device import model_device
from attnexp.models.interface import AttentionModel


def input_lengths(model: AttentionModel, batch) -> torch.Tensor:
    """Positions each example has as the model's input [B] (`model.input_lengths`): our Transformer reads [CLS] +
    the words, without the closing marker; the other models read all `batch.lengths` (e.g. a Hugging Face
    model's [CLS] ... [SEP], which A&Z §2.3 keep)."""
    return model.input_lengths(batch)


def relevance_and_importance(
    model: AttentionModel,
    rows: pd.DataFrame,
    *,
    batch_size: int,
    relevance_row: str,
    rollout_residual: bool,
    flow_solver: str,
    score: str,
    blank: int | None = None,
    memory_budget_mb: float | None = None,
    progress: Callable[[str], None] = print,
) -> pd.DataFrame:
    """Per example: raw / rollout / flow relevance [layers][n], blank-out and the input-gradient measures the model
    defines [n] (`importance.input_gradients`: no `grad` on the pre-LN Transformer), flow seconds.

    The n positions are the ones the model reads (`input_lengths`): for our Transformer [CLS] + the words
    (A&Z §2.1; it masks out the closing marker of the preprocessed tokens, so every vector stops before it).
    `blank`: the token blank-out substitutes (default: our UNK; the model's `blank_id` when it has one, e.g.
    [MASK] for a Hugging Face BERT). `memory_budget_mb` (`analyses.memory_budget_mb`): blank-out's and the input
    gradients' chunks (None: blank-out's default, the gradients of a batch in one pass).
    """
    from attnexp.analyses.az.flow import batch_flow
    from attnexp.analyses.az.importance import blank_out, input_gradients
    from attnexp.analyses.az.rollout import head_average, raw_relevance, relevance_rows, residual_augment, rollout
    from attnexp.data.vocab import UNK

    if blank is None:
        blank = UNK if model.blank_id is None else model.blank_id
    model.eval()
    device = model_device(model)
    closing = reads_closing_marker(model, rows) if len(rows) else False
    records = []
    for number, on_cpu in enumerate(sequential_batches(rows, batch_size)):
        start = time.perf_counter()
        batch = on_cpu.to(device)
        lengths = input_lengths(model, on_cpu)  # on the CPU, as the flow and the records need them
        # a prompted LM's maps cover its whole prompt: relevance flows over it and is then read at the text
        frame = getattr(model, "relevance_frame", None)
        graph, query = frame(on_cpu) if frame else (lengths, explained_positions(model, lengths))
        with torch.no_grad():
            output = model(batch)
            maps = output.encoded.maps
            averaged = head_average(maps)
            augmented = residual_augment(averaged)  # flow capacities: always Â = 0.5 W + 0.5 I (§3.5)
            raw = raw_relevance(maps, graph.to(device), relevance_row, query).cpu()
            rolled = rollout(residual_augment(averaged, rollout_residual))  # the ablation changes rollout only
            roll = relevance_rows(rolled, graph.to(device), relevance_row, query).cpu()
        flow, seconds = batch_flow(
            augmented.double().cpu().numpy(),
            graph.numpy(),
            query=query.numpy(),
            row=relevance_row,
            solver=flow_solver,
            progress=False,
        )
        if frame:  # the text's relevance at 1 .. n; everything outside it (template, specials) at 0, the sink
            raw, roll = (model.relevance_to_batch(values, on_cpu) for values in (raw, roll))
            flow = model.relevance_to_batch(torch.as_tensor(np.asarray(flow)), on_cpu).numpy()
        budget = {} if memory_budget_mb is None else {"memory_budget_mb": memory_budget_mb}
        blank_scores = blank_out(model, batch, score, blank, **budget).cpu()
        gradients = {name: values.cpu() for name, values in input_gradients(model, batch, score, memory_budget_mb).items()}
        predicted = model.predict(output.logits).cpu()
        batch = on_cpu
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
                    **{
                        f"{method}_sink": sink_mass(values[i], n, closing)
                        for method, values in (("raw", raw), ("rollout", roll), ("flow", flow))
                    },
                    "blankout": blank_scores[i, :n].tolist(),
                    **{name: values[i, :n].tolist() for name, values in gradients.items()},
                    "flow_seconds": float(seconds[i]),
                }
            )
        progress(
            f"batch {number + 1}: {batch.size} examples, {time.perf_counter() - start:.1f}s "
            f"(flow {seconds.mean():.3f}s per example)"
        )
    return pd.DataFrame(records)


def sink_mass(rows, n: int, closing: bool) -> list[float]:
    """Per layer, the share of a relevance row [layers, >= n] on the special positions outside the rankable tokens:
    the opening [CLS] / [BOS] (position 0) and, where the model reads it, the closing [SEP] / [EOS] (`closing`). A
    decoder puts much of every row there (the attention sink); the correlations rank the rankable tokens alone, so
    this is what their renormalisation hides (`{method}_sink` in relevance.parquet)."""
    values = np.asarray(rows, dtype=float)[:, :n]
    total = values.sum(-1)
    special = values[:, 0] + (values[:, n - 1] if closing and n > 1 else 0.0)
    return np.divide(special, total, out=np.full(len(total), np.nan), where=total > 0).tolist()


def explained_positions(model: AttentionModel, lengths: torch.Tensor) -> torch.Tensor:
    """The position q whose relevance A&Z read, per example [B]: the model's own (`query_positions`: a decoder's
    last token), else [CLS] (0)."""
    own = getattr(model, "query_positions", None)
    return own(lengths).cpu() if own is not None else torch.zeros_like(lengths)


def reads_closing_marker(model: AttentionModel, rows: pd.DataFrame) -> bool:
    """Whether the model's input ends with the closing marker of the preprocessed tokens (a Hugging Face model's
    [SEP]; our Transformer masks its closing marker out, `input_lengths`)."""
    batch = next(iter(sequential_batches(rows.head(1), 1)))
    return bool(model.input_lengths(batch)[0] == batch.lengths[0])


def measures(relevance: pd.DataFrame) -> list[str]:
    """The importance measures a relevance table holds, in `IMPORTANCES` order."""
    return [name for name in IMPORTANCES if name in relevance.columns]


def correlations(
    relevance: pd.DataFrame, dataset: str, *, exclude_special: bool, spearman: str, closing: bool = False
) -> pd.DataFrame:
    """Long table: example_id, task, layer, method, importance, rho, is_nan, n (Spearman, §5).

    Every importance column the relevance table has (`measures`). Vectors cover the model's input positions;
    `exclude_special` drops its special positions before correlating: [CLS] (position 0), and the closing marker where
    the model reads one (`closing`: a Hugging Face model's final [SEP]; our Transformer does not read its closing
    marker, so its vectors already stop before it)."""
    lengths = relevance["length"].to_numpy()
    width = int(lengths.max())
    starts = np.full(len(lengths), int(exclude_special))
    stops = lengths - int(exclude_special and closing)
    n_layers = len(relevance["raw"].iloc[0])
    parts = []
    for importance in measures(relevance):
        scores = padded_rows(relevance[importance], width)
        for method in METHODS:
            for layer in range(n_layers):
                values = padded_rows(relevance[method].map(lambda r, k=layer: r[k]), width)
                rho = spearman_ragged(values, scores, starts, stops, spearman)
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


def summarise_correlations(table: pd.DataFrame, *, nan_policy: str, cumulative_layer_lists: bool) -> pd.DataFrame:
    """mean and population std of rho per task, method, importance and layer, with n and n_nan.

    NaN rho (a constant vector) counts as 0 (`nan_policy: zero`, the authors) or is dropped (`omit`);
    the quirk `cumulative_layer_lists` pools each layer with all layers below it, as the authors' logs do.
    """
    table = table.assign(value=table["rho"].fillna(0.0) if nan_policy == "zero" else table["rho"])
    rows = []
    for (task, method, importance), group in table.groupby(["task", "method", "importance"], sort=False):
        for layer in sorted(group["layer"].unique()):
            part = group[group["layer"] <= layer] if cumulative_layer_lists else group[group["layer"] == layer]
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
    generated data); examples without any are skipped. Only word positions (1 .. n-1; 0 is [CLS]) compete. top1: the
    highest-relevance word is a ground-truth token; mrr: mean reciprocal rank of the best-ranked one;
    share: mean relevance mass on ground-truth tokens among the words.
    """
    known = (truth.map(len) > 0).to_numpy()
    relevance, truth = relevance[known], truth[known]
    if not len(relevance):
        return pd.DataFrame(columns=["task", "method", "layer", "top1", "mrr", "share", "n"])
    lengths = relevance["length"].to_numpy()
    width = int(lengths.max())
    words = (np.arange(width)[None, :] >= 1) & (np.arange(width)[None, :] < lengths[:, None])
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
            score(method, layer + 1, padded_rows(relevance[method].map(lambda r, k=layer: r[k]), width))
    for importance in measures(relevance):
        score(importance, 0, padded_rows(relevance[importance], width))
    return pd.DataFrame(rows)


# --- across seeds ---

SUMMARY_KEYS = ("task", "method", "importance", "layer")
RECOVERY_KEYS = ("task", "method", "layer")


def mean_with_seed_std(
    per_seed: pd.DataFrame, keys: Sequence[str], means: Sequence[str], sums: Sequence[str], spread_of: str
) -> pd.DataFrame:
    """A&Z's across-seed aggregate. Collapse the `seed` column: n_seeds, the mean over seeds of `means`, the
    population std over seeds of `spread_of` (`{spread_of}_seed_std`, 0 with one seed) and the sum of `sums`
    (counts over all seeds). (The J&W tables use `report.tables.mean_with_bootstrap_ci` instead.)"""
    grouped = per_seed.groupby(list(keys), sort=False)
    table = grouped[list(means)].mean()
    table.insert(0, "n_seeds", grouped["seed"].nunique())
    table[f"{spread_of}_seed_std"] = grouped[spread_of].std(ddof=0)
    for column in sums:
        table[column] = grouped[column].sum()
    return table.reset_index()
