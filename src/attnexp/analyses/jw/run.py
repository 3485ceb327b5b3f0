"""All J&W analyses of one trained model on its test split (§6), written as the per-model tables.

Outputs (test split, length-sorted order): importance.parquet, kendall.parquet, kendall_summary.csv,
permutation.parquet, adversary.parquet, rationale_recovery.csv, and analysis_config.yaml recording
every option (quirks included) and the seed.
"""

import time
from dataclasses import asdict
from pathlib import Path

import torch

from attnexp.analyses.jw.instances import AnalysisSettings, adversary_table, importance_table, permutation_table
from attnexp.analyses.jw.kendall import PAIRS, kendall_tau_per_instance, summarise_kendall
from attnexp.analyses.jw.rationale import rationale_recovery
from attnexp.data.preprocess import load_preprocessed, split_frame
from attnexp.io import write_csv, write_parquet, write_yaml
from attnexp.models.checkpoint import load_model


def run_analyses(
    model_path: str | Path,
    instances_dir: str | Path,
    outputs: dict,
    options: dict | AnalysisSettings,
    batch_size: int,
    labels: dict,
    threads: int = 1,
) -> None:
    """Every analysis of one model with the config's `analyses` section (`options`) and the training batch size.

    `labels` = dataset, encoder, attention, seed; the seed also seeds the permutations and the adversary's start.
    """
    settings = options if isinstance(options, AnalysisSettings) else AnalysisSettings.from_config(options, batch_size)
    labels = {
        "dataset": labels["dataset"],
        "encoder": labels["encoder"],
        "attention": labels["attention"],
        "seed": int(labels["seed"]),
    }
    torch.set_num_threads(threads)
    start = time.perf_counter()
    model = load_model(model_path)
    instances, meta = load_preprocessed(instances_dir)
    rows = split_frame(instances, "test")
    seed = labels["seed"]
    print(f"analysing {labels}: {len(rows)} test instances, batch size {settings.batch_size}", flush=True)

    importance = importance_table(model, rows, settings)
    write_parquet(outputs["importance"], importance)
    pairs = [p for p in PAIRS if "loo" not in PAIRS[p] or settings.bc_loo or not model.is_binary]
    taus = kendall_tau_per_instance(importance, pairs)
    write_parquet(outputs["kendall"], taus)
    write_csv(outputs["kendall_summary"], summarise_kendall(taus, meta["classes"], settings.nan_policy, labels))
    write_csv(outputs["rationale"], rationale_recovery(importance, labels=labels))

    write_parquet(outputs["permutation"], permutation_table(model, rows, settings, torch.Generator().manual_seed(seed)))
    write_parquet(outputs["adversary"], adversary_table(model, rows, settings, torch.Generator().manual_seed(seed + 1)))
    write_yaml(
        outputs["config"],
        {
            **labels,
            "settings": asdict(settings),
            "task": meta["task"],
            "classes": meta["classes"],
            "adversary_report_epsilon": settings.adversary.report_epsilon(meta["task"]),
            "adversary_hinge_epsilon": settings.adversary.hinge_epsilon(meta["task"]),
        },
    )
    print(f"all analyses done in {time.perf_counter() - start:.1f}s", flush=True)
