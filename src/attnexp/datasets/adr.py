"""ADR tweets (Nikfarjam et al. 2015) from the user-supplied processed CSV `text,label,exp_split` (§3.3)."""

from pathlib import Path

import pandas as pd

from attnexp.datasets.readers import read_jw_csv


def read_adr(files: dict[str, Path]) -> pd.DataFrame:
    """Text as given, ADR = 1; the given train/test splits (dev is carved from train when absent)."""
    frame = read_jw_csv(files["csv"])
    bad = sorted(set(frame["split"]) - {"train", "dev", "test"})
    if bad:
        raise ValueError(f"{files['csv']}: exp_split values {bad} are not train/dev/test")
    if not set(frame["label"]) <= {0, 1}:
        raise ValueError(f"{files['csv']}: labels must be 0 (no ADR) or 1 (ADR), found {sorted(set(frame['label']))}")
    return frame
