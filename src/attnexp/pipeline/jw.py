"""All J&W analyses of one trained model on its test split (§6), written as the per-model tables.

Outputs (test split, length-sorted order): importance.parquet, kendall.parquet, kendall_summary.csv,
permutation.parquet, adversary.parquet, rationale_recovery.csv, and analysis_config.yaml recording
every option (quirks included) and the seed.
"""

import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import torch

from attnexp.analyses.jw.instances import adversary_table, importance_table, permutation_table
from attnexp.analyses.jw.kendall import PAIRS, kendall_tau_per_instance, summarise_kendall
from attnexp.analyses.jw.rationale import rationale_recovery
from attnexp.analyses.jw.settings import AnalysisSettings
from attnexp.data.preprocess import split_frame
from attnexp.io import read_json, read_parquet, write_csv, write_parquet, write_yaml
from attnexp.models.checkpoint import load_model
from attnexp.models.device import set_threads
from attnexp.models.encoders import set_padded_lstm
from attnexp.provenance import code_version


def run_analyses(
    *,
    model: str | Path,
    instances: str | Path,
    meta: str | Path,
    settings: AnalysisSettings,
    labels: Mapping,
    outputs: Mapping[str, str | Path],
    threads: int = 1,
    adversary: bool = True,
) -> None:
    """Every analysis of the checkpoint `model` on the test split of the preprocessed `instances` (+ `meta`).

    `labels` = dataset, encoder, attention, seed; the seed also seeds the permutations and the adversary's start.
    `outputs`: a path per file of `attnexp.paths.ANALYSIS_FILES` (importance, kendall, ..., config).
    `adversary=False` (Hugging Face models, whose heads do not share one attention vector) writes an empty
    adversary table instead of searching.
    """
    labels = {
        "dataset": labels["dataset"],
        "encoder": labels["encoder"],
        "attention": labels["attention"],
        "seed": int(labels["seed"]),
    }
    set_threads(threads)
    start = time.perf_counter()
    classifier = set_padded_lstm(load_model(model, settings.device), settings.padded_lstm)
    meta = read_json(meta)
    rows = split_frame(read_parquet(instances), "test")
    seed = labels["seed"]
    print(f"analysing {labels}: {len(rows)} test instances, batch size {settings.batch_size}", flush=True)

    importance = importance_table(classifier, rows, settings)
    write_parquet(outputs["importance"], importance)
    pairs = [p for p in PAIRS if "loo" not in PAIRS[p] or settings.bc_loo or not classifier.is_binary]
    taus = kendall_tau_per_instance(importance, pairs)
    write_parquet(outputs["kendall"], taus)
    write_csv(outputs["kendall_summary"], summarise_kendall(taus, meta["classes"], settings.nan_policy, labels))
    write_csv(outputs["rationale"], rationale_recovery(importance, labels=labels))

    permutation = permutation_table(classifier, rows, settings, torch.Generator().manual_seed(seed))
    write_parquet(outputs["permutation"], permutation)
    if adversary:
        write_parquet(outputs["adversary"], adversary_table(classifier, rows, settings, seed + 1))
    else:
        write_parquet(
            outputs["adversary"], pd.DataFrame({"instance_id": pd.Series(dtype=str), "emax_jsd": pd.Series(dtype=float)})
        )
    write_yaml(
        outputs["config"],
        {
            **labels,
            "settings": {k: v for k, v in asdict(settings).items() if k != "device"},
            **({} if adversary else {"adversary": "skipped: the model's heads share no single attention vector"}),
            "task": meta["task"],
            "classes": meta["classes"],
            "adversary_report_epsilon": settings.adversary.report_epsilon(meta["task"]),
            "adversary_hinge_epsilon": settings.adversary.hinge_epsilon(meta["task"]),
            "code_version": code_version(),
        },
    )
    print(f"all analyses done in {time.perf_counter() - start:.1f}s", flush=True)
