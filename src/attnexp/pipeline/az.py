"""The Abnar & Zuidema analyses: read raw / rollout / flow relevance at every layer of a trained Transformer,
compute blank-out and gradient importance, correlate them (Spearman per example, §5), score how well each
method finds the subject on agreement data, and combine the per-seed summaries. Tables and figures are drawn
in `attnexp.report.az`.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from attnexp.analyses.az.run import (
    RECOVERY_KEYS,
    SUMMARY_KEYS,
    across_seeds,
    correlations,
    relevance_and_importance,
    subject_recovery,
    summarise_correlations,
)
from attnexp.analyses.az.settings import AZSettings
from attnexp.io import read_csv, read_parquet, write_csv, write_json, write_parquet
from attnexp.models.device import resolve_device, set_threads


def run_az_analysis(
    *,
    model: str | Path,
    instances: str | Path,
    dataset: str,
    settings: AZSettings,
    outputs: Mapping[str, str | Path],
    threads: int = 1,
    task: str | None = None,
    device: str = "auto",
) -> None:
    """Relevance, importance, correlations and subject recovery for one trained Transformer (test split), on
    `device` (the config's setting, resolved here).

    `outputs`: relevance, correlations (parquet), summary, recovery (CSV), timings (flow seconds per example, JSON),
    as `attnexp.paths.az_files()` names them.
    `task`: the label of the rows in the tables (default: `dataset`; Hugging Face runs add the model's name).
    """
    from attnexp.data.preprocess import split_frame
    from attnexp.models.checkpoint import load_model

    set_threads(threads)
    loaded = load_model(model, resolve_device(device))
    test = split_frame(read_parquet(instances), "test")
    if settings.n_examples and len(test) > settings.n_examples:
        keep = np.sort(np.random.default_rng(settings.sample_seed).choice(len(test), settings.n_examples, replace=False))
        test = test.iloc[keep].reset_index(drop=True)
    print(f"{dataset}: {len(test)} test examples, {loaded.config.n_layers} layers, {settings}")
    relevance = relevance_and_importance(
        loaded,
        test,
        batch_size=settings.batch_size,
        relevance_row=settings.relevance_row,
        rollout_residual=settings.rollout_residual,
        flow_solver=settings.flow_solver,
        score=settings.score,
    )
    relevance["subject"] = test["rationale"].map(list).to_numpy()
    dataset = task or dataset
    table = correlations(relevance, dataset, exclude_special=settings.exclude_special, spearman=settings.spearman)
    summary = summarise_correlations(
        table, nan_policy=settings.nan_policy, cumulative_layer_lists=settings.cumulative_layer_lists
    )
    recovery = subject_recovery(relevance, test["rationale"].map(list), dataset)
    flow_seconds = relevance.pop("flow_seconds")  # wall time: kept out of the byte-identical relevance table
    write_parquet(outputs["relevance"], relevance)
    write_parquet(outputs["correlations"], table)
    write_csv(outputs["summary"], summary)
    write_csv(outputs["recovery"], recovery)
    if "timings" in outputs:
        timings = {"instance_id": relevance["instance_id"].tolist(), "flow_seconds": flow_seconds.round(6).tolist()}
        write_json(outputs["timings"], timings)
    print(f"flow: {flow_seconds.mean():.4f}s per example (mean), {flow_seconds.sum():.1f}s total")
    print(summary.to_string())


def combine_runs(runs: Sequence[Mapping], outputs: Mapping[str, str | Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every dataset's correlation summary and subject recovery across its seeds.

    `runs`: one mapping per (dataset, seed) with `seed`, `summary` and `recovery` (the per-run CSVs of
    `run_az_analysis`); `outputs`: summary, recovery (CSV). With one seed, mean/std/n/n_nan (top1/mrr/share/n)
    are that run's values.
    """
    summaries = [read_csv(run["summary"]).assign(seed=int(run["seed"])) for run in runs]
    recoveries = [read_csv(run["recovery"]).assign(seed=int(run["seed"])) for run in runs]
    summary = across_seeds(pd.concat(summaries, ignore_index=True), SUMMARY_KEYS, ["mean", "std"], ["n", "n_nan"], "mean")
    recovery = pd.concat([f for f in recoveries if len(f)] or recoveries[:1], ignore_index=True)
    recovery = across_seeds(recovery, RECOVERY_KEYS, ["top1", "mrr", "share"], ["n"], "top1")
    write_csv(outputs["summary"], summary)
    write_csv(outputs["recovery"], recovery)
    print(f"{len(runs)} runs: {summary['task'].nunique()} datasets, seeds {sorted({int(r['seed']) for r in runs})}")
    return summary, recovery
