"""How far other runs lie from the base run on the test set (W&P §4, Figure 3): per instance the TVD of the outputs
and the JSD of the attention, and their means over instances, one point per seed, the uniform model, each
adversary and J&W's per-instance adversary. On the runs' stored outputs in memory; the jobs that read and write
them are `attnexp.pipeline.wp`. Tables and figures: attnexp.report.wp."""

from collections.abc import Iterable, Sequence
from itertools import chain

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.wp.consistent_adversary import binary_tvd, divergence_to_base
from attnexp.analyses.wp.seed_variance import RunOutputs, attention_matrix, probabilities


def aggregate(values: np.ndarray, aggregation: str) -> float:
    """Mean over instances (DEFAULT) or the authors' stored sum (quirk `wp.report_aggregation: sum`)."""
    return float(np.sum(values) if aggregation == "sum" else np.mean(values))


def divergences_from_base(base: RunOutputs, run: RunOutputs, tvd_binary: str) -> tuple[np.ndarray, np.ndarray]:
    """Per test instance (TVD, JSD) between a run and the base, matched by instance id, in the base's order."""
    (base_predictions, base_attention), (run_predictions, run_attention) = base, run
    ids = list(base_predictions["instance_id"])
    return divergence_to_base(
        probabilities(base_predictions, ids),
        attention_matrix(base_attention, ids),
        probabilities(run_predictions, ids),
        attention_matrix(run_attention, ids),
        tvd_binary,
    )


def jsd_tvd_points(
    dataset: str,
    base: RunOutputs,
    seeds: Iterable[tuple[int, RunOutputs]],
    uniform: RunOutputs,
    adversaries: Iterable[RunOutputs],
    lambdas: Sequence[float],
    tvd_binary: str = "full",
    aggregation: str = "mean",
    jw_adversary: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Mean test JSD and TVD to the base for every seed (its seed number, outputs), the uniform model and each
    adversary (outputs, one per lambda) (W&P Fig. 3); J&W's per-instance adversary table (if given) as the mean
    over its runs. Every TVD follows `tvd_binary`. `seeds` and `adversaries` are taken one run at a time, in
    order (a job can read each run as it comes)."""
    rows = []
    labelled = chain(
        (("seed", str(seed), outputs) for seed, outputs in seeds),
        [("uniform", "uniform", uniform)],
        (("adversary", f"{lam:g}", outputs) for lam, outputs in zip(lambdas, adversaries, strict=True)),
    )
    for kind, label, outputs in labelled:
        tvd, divergence = divergences_from_base(base, outputs, tvd_binary)
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
    if jw_adversary is not None:
        frame = jw_adversary
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
