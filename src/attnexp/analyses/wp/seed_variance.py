"""Expected attention variance across seeds (W&P §3.2): per test instance, how far other seeds' attention
(or any set of comparison runs, e.g. J&W adversaries) lies from the base run's, against max attention and
against the change in output."""

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.divergences import jsd

VARIANTS = ("script", "notebook")

RunOutputs = tuple[pd.DataFrame, pd.DataFrame]  # a run's stored test predictions (instance_id, p) and attention


def attention_matrix(attention: pd.DataFrame, ids: list[str]) -> np.ndarray:
    """Stored per-instance attention (instance_id, attention) as a zero-padded [N, L] array in the order of `ids`."""
    by_id = dict(zip(attention["instance_id"], attention["attention"], strict=True))
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise KeyError(f"attention file lacks {len(missing)} instance(s), e.g. {missing[:3]}; all runs must share test data")
    width = max((len(by_id[i]) for i in ids), default=0)
    out = np.zeros((len(ids), width))
    for row, i in enumerate(ids):
        out[row, : len(by_id[i])] = by_id[i]
    return out


def probabilities(predictions: pd.DataFrame, ids: list[str]) -> np.ndarray:
    return predictions.set_index("instance_id").loc[ids, "p"].to_numpy(dtype=float)


def seed_variance(
    base_p: np.ndarray, base_attention: np.ndarray, other_p: np.ndarray, other_attention: np.ndarray, variant: str = "script"
) -> pd.DataFrame:
    """Per instance: attn_diff (median over runs of JSD to the base), y_diff (mean |p_s - p_base|),
    max_attn (base) and class (round p_base). Shapes: base [N], [N, L]; others [S, N], [S, N, L].

    quirk `wp.seed_plot_variant: notebook`: the authors' notebook subtracts the output change from each JSD
    before the median and takes max attention from the comparison runs (mean over runs of their max)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown seed_plot_variant {variant!r}; choose one of {VARIANTS}")
    divergence = jsd(torch.as_tensor(base_attention)[None], torch.as_tensor(other_attention)).numpy()  # [S, N]
    output_change = np.abs(other_p - base_p[None])
    if variant == "script":
        attn_diff, max_attn = np.median(divergence, axis=0), base_attention.max(axis=1, initial=0.0)
    else:
        attn_diff, max_attn = np.median(divergence - output_change, axis=0), other_attention.max(axis=2, initial=0.0).mean(axis=0)
    return pd.DataFrame(
        {
            "attn_diff": attn_diff,
            "y_diff": output_change.mean(axis=0),
            "max_attn": max_attn,
            "class": np.round(base_p).astype(int),
        }
    )


def variance_table(base: RunOutputs, comparisons: list[RunOutputs], variant: str) -> pd.DataFrame:
    """Per test instance (`seed_variance` with `instance_id` first), the base run's outputs against
    `comparisons` (predictions, attention), on the instances every comparison covers (all the test split; J&W's
    adversary runs: the analysed sample, `analyses.test_sample`), in the base run's order."""
    base_predictions, base_attention = base
    covered = set.intersection(*(set(predictions["instance_id"]) for predictions, _ in comparisons))
    ids = [i for i in base_predictions["instance_id"] if i in covered]
    other_p = np.stack([probabilities(predictions, ids) for predictions, _ in comparisons])
    matrices = [attention_matrix(base_attention, ids)]
    matrices += [attention_matrix(attention, ids) for _, attention in comparisons]
    width = max(m.shape[1] for m in matrices)
    matrices = [np.pad(m, ((0, 0), (0, width - m.shape[1]))) for m in matrices]
    frame = seed_variance(probabilities(base_predictions, ids), matrices[0], other_p, np.stack(matrices[1:]), variant)
    frame.insert(0, "instance_id", ids)
    return frame
