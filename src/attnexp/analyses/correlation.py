"""Spearman's rho between two vectors per example (A&Z §5), vectorised over examples of equal length."""

import numpy as np
from scipy.stats import rankdata

SPEARMAN = ("scipy", "dense_rank_formula")


def spearman_rows(a: np.ndarray, b: np.ndarray, method: str = "scipy") -> np.ndarray:
    """rho between matching rows of a and b [m, n]; NaN where a row is constant.

    `scipy`: Pearson correlation of average ranks (= scipy.stats.spearmanr). `dense_rank_formula`
    (quirk of the authors' SST script): 1 - 6 sum d^2 / (n (n^2 - 1)) on dense ranks, wrong under ties.
    """
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    n = a.shape[1]
    if method == "dense_rank_formula":
        d = rankdata(a, method="dense", axis=1) - rankdata(b, method="dense", axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1 - 6 * (d**2).sum(axis=1) / (n * (n**2 - 1))
    if method != "scipy":
        raise ValueError(f"unknown spearman method {method!r}; choose one of {SPEARMAN}")
    ra = rankdata(a, axis=1) - (n + 1) / 2
    rb = rankdata(b, axis=1) - (n + 1) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (ra * rb).sum(axis=1) / np.sqrt((ra**2).sum(axis=1) * (rb**2).sum(axis=1))
    constant = (np.ptp(a, axis=1) == 0) | (np.ptp(b, axis=1) == 0)
    return np.where(constant, np.nan, rho)


def spearman_ragged(a: np.ndarray, b: np.ndarray, starts: np.ndarray, stops: np.ndarray, method: str = "scipy") -> np.ndarray:
    """rho per row between a[i, starts[i]:stops[i]] and b[i, ...] for padded arrays [m, width]."""
    rho = np.full(len(a), np.nan)
    spans = stops - starts
    for span in np.unique(spans):
        rows = np.nonzero(spans == span)[0]
        columns = starts[rows, None] + np.arange(span)[None, :]
        rho[rows] = spearman_rows(a[rows[:, None], columns], b[rows[:, None], columns], method)
    return rho
