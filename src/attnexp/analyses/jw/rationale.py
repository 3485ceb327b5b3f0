"""Ground truth the papers never had: how well each importance measure finds the planted cue tokens.

Per instance with k planted cues: precision at k (share of the k top-scored tokens that are cues) and
the ROC-AUC of the scores for separating cue from non-cue tokens; averaged over instances. Both are computed
for every instance at once over the padded [N, L] scores.
"""

from collections.abc import Sequence

import numpy as np
import pandas as pd

from attnexp.data.batching import padded_rows

MEASURES = ("attention", "gradient", "loo", "ig")
COLUMNS = ["measure", "precision_at_k", "auc", "n", "chance_precision_at_k"]


def cue_mask(cues: Sequence, width: int) -> np.ndarray:
    """[N, width] True at each instance's cue positions."""
    mask = np.zeros((len(cues), width), dtype=bool)
    rows = np.repeat(np.arange(len(cues)), [len(c) for c in cues])
    mask[rows, np.concatenate([np.asarray(c, dtype=int) for c in cues] or [np.zeros(0, dtype=int)])] = True
    return mask


def precision_at_k(scores: np.ndarray, cues: np.ndarray) -> np.ndarray:
    """Share of the k highest-scored positions that are cues, k = each row's cue count (ties: earlier position
    first); `scores` [N, L] (NaN past a row's end), `cues` [N, L] bool. [N]."""
    order = np.argsort(-np.nan_to_num(scores, nan=-np.inf), axis=1, kind="stable")
    rank = np.argsort(order, axis=1)  # each position's place in that order
    k = cues.sum(axis=1)
    return (cues & (rank < k[:, None])).sum(axis=1) / k


def cue_auc(scores: np.ndarray, cues: np.ndarray) -> np.ndarray:
    """ROC-AUC of each row's scores for cue vs non-cue positions, as the Mann-Whitney U over both counts (ties count
    half, as scikit-learn's roc_auc_score); `scores` [N, L] (NaN past a row's end), `cues` [N, L] bool. [N]; NaN
    where every token is a cue."""
    from scipy.stats import rankdata

    ranks = rankdata(scores, axis=1, nan_policy="omit")
    positives, negatives = cues.sum(axis=1), (~np.isnan(scores) & ~cues).sum(axis=1)
    u = np.where(cues, ranks, 0.0).sum(axis=1) - positives * (positives + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(negatives > 0, u / (positives * negatives), np.nan)


def rationale_recovery(importance: pd.DataFrame, measures: Sequence[str] = MEASURES, labels: dict | None = None) -> pd.DataFrame:
    """One row per measure over the instances with planted cues (a measure with NaN scores, not computed, is left
    out); an empty table (with header) when there are none."""
    planted = importance[importance["rationale"].map(len) > 0]
    rows = []
    if len(planted):
        cues = list(planted["rationale"])
        chance = float(np.mean([len(c) / n for c, n in zip(cues, planted["length"], strict=True)]))
        for measure in measures:
            vectors = list(planted[measure])
            if np.isnan(np.concatenate([np.asarray(v, dtype=float) for v in vectors])).any():
                continue
            scores = padded_rows(vectors, fill=np.nan)
            mask = cue_mask(cues, scores.shape[1])
            rows.append(
                {
                    "measure": measure,
                    "precision_at_k": float(np.mean(precision_at_k(scores, mask))),
                    "auc": float(np.nanmean(cue_auc(scores, mask))),
                    "n": len(planted),
                    "chance_precision_at_k": chance,
                }
            )
    table = pd.DataFrame(rows, columns=COLUMNS)
    for position, (key, value) in enumerate((labels or {}).items()):
        table.insert(position, key, pd.Series([value] * len(table), dtype=object))
    return table
