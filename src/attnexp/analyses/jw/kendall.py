"""Kendall tau-b between importance measures per instance, and its summary (J&W §6.3).

τ is NaN when a vector is constant (one token, identical weights, zero gradients). By default
(`nan_policy: omit`) such instances are dropped from every statistic and counted in n_nan; the
authors' `propagate` keeps them (NaN mean, NaN p counted as non-significant).
"""

import warnings
from collections.abc import Sequence
from functools import cache

import numpy as np
import pandas as pd
from scipy.special import ndtr
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
BATCHED_MAX_LENGTH = 128  # longer vectors go to scipy one pair at a time: the batched pair matrices grow as n^2
BATCH_CELLS = 2**22  # instances x n^2 pair cells per batched block (~100 MB of temporaries)


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


@cache
def _exact_p_value(n: int, discordant: int) -> float:
    """scipy's exact two-sided p-value of n tie-free ranks with this many discordant pairs, from scipy itself: the
    ranks 0..n-1 against a permutation with exactly that many inversions (built from its Lehmer code)."""
    left, order = discordant, list(range(n))
    permutation = []
    for position in range(n):
        digit = min(left, n - 1 - position)
        permutation.append(order.pop(digit))
        left -= digit
    return float(kendalltau(np.arange(n), np.array(permutation), method="exact").pvalue)


def kendall_tau_batch(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tau-b, two-sided p, exact) [G] for G pairs of equal-length vectors x, y [G, n]: `kendall_tau` per row, the
    same numbers as scipy's kendalltau (method 'auto'), from the n(n-1)/2 pair signs of every row at once.

    scipy has no batched Kendall tau; one call per pair costs ~0.3 ms, mostly argument handling, which on short
    vectors (SNLI: 9,824 instances x 6 pairs) outweighs the model passes. The statistic and scipy's tie-corrected
    normal approximation are computed here term by term in scipy's order; exact p-values come from scipy
    (`_exact_p_value`). NaN where a row has a NaN or is constant.
    """
    g, n = x.shape
    tau, p, exact = np.full(g, np.nan), np.full(g, np.nan), np.zeros(g, dtype=bool)
    if n < 2:
        return tau, p, exact
    has_nan = np.isnan(x).any(-1) | np.isnan(y).any(-1)
    x, y = np.where(np.isnan(x), 0.0, x), np.where(np.isnan(y), 0.0, y)  # those rows are NaN in the end anyway
    first, second = np.triu_indices(n, 1)
    equal_x, equal_y = x[:, :, None] == x[:, None, :], y[:, :, None] == y[:, None, :]
    sign_x = np.sign(x[:, first] - x[:, second]).astype(np.int8)
    sign_y = np.sign(y[:, first] - y[:, second]).astype(np.int8)
    product = sign_x * sign_y
    difference = product.sum(-1, dtype=np.int64)  # concordant - discordant
    discordant = (product == -1).sum(-1)
    tied_x, tied_y = (sign_x == 0).sum(-1), (sign_y == 0).sum(-1)
    total = n * (n - 1) // 2
    valid = ~has_nan & (tied_x < total) & (tied_y < total)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.clip(difference / np.sqrt(total - tied_x) / np.sqrt(total - tied_y), -1.0, 1.0)
        exact = (tied_x == 0) & (tied_y == 0) & ((n <= 33) | (np.minimum(discordant, total - discordant) <= 1))
        # scipy's variance of concordant - discordant under ties; t: each value's tie group size
        group_x, group_y = equal_x.sum(-1).astype(float), equal_y.sum(-1).astype(float)
        x0, y0 = ((group_x - 1) * (group_x - 2)).sum(-1), ((group_y - 1) * (group_y - 2)).sum(-1)
        x1, y1 = ((group_x - 1) * (2 * group_x + 5)).sum(-1), ((group_y - 1) * (2 * group_y + 5)).sum(-1)
        m = n * (n - 1.0)
        variance = (m * (2 * n + 5) - x1 - y1) / 18 + (2 * tied_x * tied_y) / m + x0 * y0 / (9 * m * (n - 2))
        p = 2 * ndtr(-np.abs(difference / np.sqrt(variance)))
    for row in np.flatnonzero(exact & valid):
        p[row] = _exact_p_value(n, int(discordant[row]))
    return np.where(valid, tau, np.nan), np.where(valid, p, np.nan), exact & valid


def kendall_tau_per_instance(importance: pd.DataFrame, pairs: Sequence[str] = tuple(PAIRS)) -> pd.DataFrame:
    """Long table (instance_id, predicted, pair, tau, p_value, method, is_nan) from the per-token vectors.

    Instances of one length up to BATCHED_MAX_LENGTH go through `kendall_tau_batch` together; longer ones through
    scipy one at a time (its O(n log n) beats the batch's n^2 pairs there, and they are few next to their model
    passes).
    """
    lengths = importance[PAIRS[pairs[0]][0]].map(len).to_numpy() if pairs else np.zeros(0, dtype=int)
    frames = []
    for pair in pairs:
        left, right = PAIRS[pair]
        tau, p = np.full(len(importance), np.nan), np.full(len(importance), np.nan)
        exact = np.zeros(len(importance), dtype=bool)
        for n in np.unique(lengths):
            rows = np.flatnonzero(lengths == n)
            if n > BATCHED_MAX_LENGTH:
                for row in rows:
                    tau[row], p[row], method = kendall_tau(importance[left].iat[row], importance[right].iat[row])
                    exact[row] = method == "exact"
                continue
            for block in np.array_split(rows, -(-len(rows) * n * n // BATCH_CELLS)):
                x = np.stack([np.asarray(v, dtype=float) for v in importance[left].iloc[block]])
                y = np.stack([np.asarray(v, dtype=float) for v in importance[right].iloc[block]])
                tau[block], p[block], exact[block] = kendall_tau_batch(x, y)
        frames.append(
            pd.DataFrame(
                {
                    "instance_id": importance["instance_id"].to_numpy(),
                    "predicted": importance["predicted"].astype(int).to_numpy(),
                    "pair": pair,
                    "tau": tau,
                    "p_value": p,
                    "method": np.where(exact, "exact", "asymptotic"),
                    "is_nan": np.isnan(tau),
                }
            )
        )
    columns = ["instance_id", "predicted", "pair", "tau", "p_value", "method", "is_nan"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


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
