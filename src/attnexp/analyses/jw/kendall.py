"""Kendall tau-b between importance measures per instance, and its summary (J&W §6.3).

τ is NaN when a vector is constant (one token, identical weights, zero gradients). By default
(`nan_policy: omit`) such instances are dropped from every statistic and counted in n_nan; the
authors' `propagate` keeps them (NaN mean, NaN p counted as non-significant).
"""

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

PAIRS = {
    "attn_grad": ("attention", "gradient"),
    "attn_loo": ("attention", "loo"),
    "grad_loo": ("gradient", "loo"),
    "attn_ig": ("attention", "ig"),
    "ig_loo": ("ig", "loo"),
    "grad_ig": ("gradient", "ig"),
}
NAN_POLICIES = ("omit", "propagate")
SIGNIFICANCE = 0.05


def computed_pairs(loo: bool, ig: bool) -> list[str]:
    """The pairs of PAIRS whose measures the job computed (`loo`: LOO was run; `ig`: IG was run)."""
    skipped = {name for name, run in (("loo", loo), ("ig", ig)) if not run}
    return [pair for pair, measures in PAIRS.items() if not skipped & set(measures)]


def kendall_method(x: np.ndarray, y: np.ndarray, tau: float) -> str:
    """Which p-value scipy's method='auto' computes: exact without ties when n <= 33 or τ is (near) ±1."""
    n = len(x)
    ties = len(np.unique(x)) < n or len(np.unique(y)) < n
    if ties or not np.isfinite(tau):
        return "asymptotic"
    total = n * (n - 1) // 2
    discordant = round((1 - tau) * total / 2)
    return "exact" if n <= 33 or min(discordant, total - discordant) <= 1 else "asymptotic"


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, str]:
    """(tau-b, two-sided p, method) as `scipy.stats.kendalltau`; NaN for fewer than 2 tokens or a constant vector."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2:
        return float("nan"), float("nan"), "asymptotic"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = kendalltau(x, y)
    tau, p = float(result.statistic), float(result.pvalue)
    return tau, p, kendall_method(x, y, tau)


def kendall_tau_per_instance(importance: pd.DataFrame, pairs: Sequence[str] = tuple(PAIRS)) -> pd.DataFrame:
    """Long table (instance_id, predicted, pair, tau, p_value, method, is_nan) from the per-token vectors.

    scipy's kendalltau works on one pair of vectors at a time, so this loops over instances (cheap next
    to the model passes that produced the vectors).
    """
    rows = []
    for pair in pairs:
        left, right = PAIRS[pair]
        for record in importance[["instance_id", "predicted", left, right]].itertuples(index=False):
            tau, p, method = kendall_tau(record[2], record[3])
            rows.append((record[0], int(record[1]), pair, tau, p, method, bool(np.isnan(tau))))
    return pd.DataFrame(rows, columns=["instance_id", "predicted", "pair", "tau", "p_value", "method", "is_nan"])


def summarise_group(taus: pd.DataFrame, nan_policy: str = "omit") -> dict:
    """mean, population std, fraction with p <= 0.05, n and n_nan of one group of τ values."""
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"unknown kendall nan_policy {nan_policy!r}; choose one of {NAN_POLICIES}")
    n_nan = int(taus["is_nan"].sum())
    kept = taus[~taus["is_nan"]] if nan_policy == "omit" else taus
    tau, p = kept["tau"].to_numpy(dtype=float), kept["p_value"].to_numpy(dtype=float)
    n = len(tau)
    return {
        "mean": float(np.mean(tau)) if n else float("nan"),
        "std": float(np.std(tau, ddof=0)) if n else float("nan"),
        "sig_frac": float(np.sum(p <= SIGNIFICANCE) / n) if n else float("nan"),
        "n": n,
        "n_nan": n_nan,
    }


def summarise_kendall(
    taus: pd.DataFrame, classes: Sequence[str], nan_policy: str = "omit", labels: dict | None = None
) -> pd.DataFrame:
    """Summary per pair and group: "Overall", plus "class <name>" per distinct predicted class when fewer than 4
    distinct classes are predicted (J&W §6.3 and the authors' `np.unique(yhat)`; not the number of classes).

    `labels` (dataset, encoder, attention, seed) are prepended as constant columns.
    """
    rows = []
    predicted = sorted(int(c) for c in taus["predicted"].unique())
    for pair, by_pair in taus.groupby("pair", sort=False):
        groups = [("Overall", by_pair)]
        if len(predicted) < 4:
            groups += [(f"class {classes[index]}", by_pair[by_pair["predicted"] == index]) for index in predicted]
        rows += [{"pair": pair, "group": group, **summarise_group(part, nan_policy)} for group, part in groups]
    columns = ["pair", "group", "mean", "std", "sig_frac", "n", "n_nan"]
    summary = pd.DataFrame(rows, columns=columns)
    for position, (key, value) in enumerate((labels or {}).items()):
        summary.insert(position, key, value)
    return summary
