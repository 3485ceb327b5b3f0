"""A seeded sample of a split's instances that keeps their order (the analyses' `analyses.test_sample`)."""

import numpy as np
import pandas as pd


def seeded_sample(rows: pd.DataFrame, n: int | None, seed: int) -> pd.DataFrame:
    """At most `n` of `rows`, drawn without replacement by numpy's Generator seeded with `seed`, in their original
    order (a length-sorted split stays sorted); every row when `n` is None or not below `len(rows)`."""
    if n is None or n >= len(rows):
        return rows
    keep = np.sort(np.random.default_rng(seed).choice(len(rows), n, replace=False))
    return rows.iloc[keep].reset_index(drop=True)
