"""Real bAbI tasks 1-3 (Weston et al. 2015, v1.2): en-10k train, official 1k test, 36-entity output list (§3.3)."""

from pathlib import Path

import pandas as pd

from attnexp.datasets.readers import read_babi_files


def read_babi(files: dict[str, Path]) -> pd.DataFrame:
    return read_babi_files({"train": files["train"], "test": files["test"]})


def babi_entities(files: dict[str, Path]) -> list[str]:
    """The words of one min_df=1 vocabulary over the train passages + questions of tasks 1-3, string-sorted."""
    frame = read_babi_files({f"qa{t}": files[f"entities_qa{t}"] for t in (1, 2, 3)})
    words = {w for text in pd.concat([frame["text"], frame["question"]]) for w in text.split()}
    return sorted(words)
