"""Ground truth the papers never had: how well each importance measure finds the planted cue tokens.

Per instance with k planted cues: precision at k (share of the k top-scored tokens that are cues) and
the ROC-AUC of the scores for separating cue from non-cue tokens; averaged over instances.
"""

from collections.abc import Sequence

import numpy as np
import pandas as pd

MEASURES = ("attention", "gradient", "loo", "ig")
COLUMNS = ["measure", "precision_at_k", "auc", "n", "chance_precision_at_k"]


def precision_at_k(scores: np.ndarray, cues: np.ndarray) -> float:
    """Share of the k = len(cues) highest-scored positions that are cues (ties: earlier position first)."""
    k = len(cues)
    top = np.argsort(-np.asarray(scores, dtype=float), kind="stable")[:k]
    return float(np.isin(top, cues).sum() / k)


def cue_auc(scores: np.ndarray, cues: np.ndarray) -> float:
    """ROC-AUC of the scores for cue vs non-cue positions; NaN when every token is a cue."""
    from sklearn.metrics import roc_auc_score  # here: scikit-learn adds ~1.5 s to every job's start

    truth = np.zeros(len(scores), dtype=bool)
    truth[cues] = True
    return float(roc_auc_score(truth, scores)) if 0 < truth.sum() < len(truth) else float("nan")


def rationale_recovery(importance: pd.DataFrame, measures: Sequence[str] = MEASURES, labels: dict | None = None) -> pd.DataFrame:
    """One row per measure over the instances with planted cues; an empty table (with header) when there are none."""
    planted = importance[importance["rationale"].map(len) > 0]
    rows = []
    if len(planted):
        cues = [np.asarray(r, dtype=int) for r in planted["rationale"]]
        chance = float(np.mean([len(c) / n for c, n in zip(cues, planted["length"], strict=True)]))
        for measure in measures:
            vectors = [np.asarray(v, dtype=float) for v in planted[measure]]
            if any(np.isnan(v).any() for v in vectors):
                continue
            rows.append(
                {
                    "measure": measure,
                    "precision_at_k": float(np.mean([precision_at_k(v, c) for v, c in zip(vectors, cues, strict=True)])),
                    "auc": float(np.nanmean([cue_auc(v, c) for v, c in zip(vectors, cues, strict=True)])),
                    "n": len(planted),
                    "chance_precision_at_k": chance,
                }
            )
    table = pd.DataFrame(rows, columns=COLUMNS)
    for position, (key, value) in enumerate((labels or {}).items()):
        table.insert(position, key, pd.Series([value] * len(table), dtype=object))
    return table
