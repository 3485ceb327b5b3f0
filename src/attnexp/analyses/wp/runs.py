"""Wiegreffe & Pinter (2019) runs: the uniform baseline, extra seeds, the diagnostic MLP with guide weights and
the model-consistent adversary, each a run with the same stored outputs (wp/{dataset}/{variant}/seed{seed}[/lambda{lam}]/),
and the per-dataset analyses over them (seed variance, JSD/TVD points). Tables and figures: attnexp.report.wp."""

from collections.abc import Mapping, Sequence
from os import PathLike

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.wp.consistent_adversary import (
    binary_tvd,
    divergence_to_base,
)
from attnexp.analyses.wp.seed_variance import attention_matrix, probabilities, seed_variance
from attnexp.io import read_json, read_parquet, write_parquet

Files = Mapping[str, str | PathLike]  # a run's named files (paths.wp_run_files)


def aggregate(values: np.ndarray, aggregation: str) -> float:
    """Mean over instances (DEFAULT) or the authors' stored sum (quirk `wp.report_aggregation: sum`)."""
    return float(np.sum(values) if aggregation == "sum" else np.mean(values))


def divergences_from_base(base_files: Files, run_files: Files, tvd_binary: str) -> tuple[np.ndarray, np.ndarray]:
    """Per test instance (TVD, JSD) between a run and the base, matched by instance id."""
    base_predictions = read_parquet(base_files["test_predictions"])
    ids = list(base_predictions["instance_id"])
    run_predictions, run_attention = read_parquet(run_files["test_predictions"]), read_parquet(run_files["test_attention"])
    base_attention = attention_matrix(read_parquet(base_files["test_attention"]), ids)
    return divergence_to_base(
        probabilities(base_predictions, ids),
        base_attention,
        probabilities(run_predictions, ids),
        attention_matrix(run_attention, ids),
        tvd_binary,
    )


def variance_table(
    base_files: Files, comparisons: list[tuple[pd.DataFrame, pd.DataFrame]], output: str | PathLike, variant: str
) -> pd.DataFrame:
    """Per test instance, the base run against `comparisons` (predictions, attention), on the instances every
    comparison covers (all the test split; J&W's adversary runs: the analysed sample, `analyses.test_sample`), in
    the base run's order."""
    base_predictions = read_parquet(base_files["test_predictions"])
    covered = set.intersection(*(set(predictions["instance_id"]) for predictions, _ in comparisons))
    ids = [i for i in base_predictions["instance_id"] if i in covered]
    other_p = np.stack([probabilities(predictions, ids) for predictions, _ in comparisons])
    matrices = [attention_matrix(read_parquet(base_files["test_attention"]), ids)]
    matrices += [attention_matrix(attention, ids) for _, attention in comparisons]
    width = max(m.shape[1] for m in matrices)
    matrices = [np.pad(m, ((0, 0), (0, width - m.shape[1]))) for m in matrices]
    frame = seed_variance(probabilities(base_predictions, ids), matrices[0], other_p, np.stack(matrices[1:]), variant)
    frame.insert(0, "instance_id", ids)
    write_parquet(output, frame)
    print(f"{len(comparisons)} comparison run(s), {len(ids)} test instances: median attn_diff {frame.attn_diff.median():.4f}")
    return frame


def jsd_tvd_points(
    dataset: str,
    base_files: Files,
    seed_files: Sequence[Files],
    uniform_files: Files,
    adversary_files: Sequence[Files],
    lambdas: Sequence[float],
    tvd_binary: str = "full",
    aggregation: str = "mean",
    jw_adversary: str | PathLike | None = None,
) -> pd.DataFrame:
    """Mean test JSD and TVD to the base for every seed, the uniform model and each adversary (W&P Fig. 3);
    the J&W per-instance adversary (if given) as the mean over its runs. Every TVD follows `tvd_binary`."""
    rows = []
    labelled = [("seed", str(read_json(f["metrics"])["seed"]), f) for f in seed_files]
    labelled += [("uniform", "uniform", uniform_files)]
    labelled += [("adversary", f"{lam:g}", f) for lam, f in zip(lambdas, adversary_files, strict=True)]
    for kind, label, files in labelled:
        tvd, divergence = divergences_from_base(base_files, files, tvd_binary)
        rows.append(
            {
                "dataset": dataset,
                "model": kind,
                "label": label,
                "jsd": aggregate(divergence, aggregation),
                "tvd": aggregate(tvd, aggregation),
                "n": len(tvd),
            }
        )
    if jw_adversary:
        frame = read_parquet(jw_adversary)
        adversarial, original = (torch.tensor([o[1] for o in frame[c]]) for c in ("adversarial_output", "original_output"))
        frame = frame.assign(tvd=binary_tvd(adversarial, original, tvd_binary).numpy())  # the same TVD as every point
        per_run = frame.groupby("run").agg(
            jsd=("emax_jsd", lambda v: aggregate(v, aggregation)), tvd=("tvd", lambda v: aggregate(v, aggregation))
        )
        rows.append(
            {
                "dataset": dataset,
                "model": "jw_adversary",
                "label": "per-instance",
                "jsd": float(per_run["jsd"].mean()),
                "tvd": float(per_run["tvd"].mean()),
                "n": int(len(frame) // len(per_run)),
            }
        )
    return pd.DataFrame(rows)
