"""Stanford Sentiment Treebank (Socher et al. 2013) from the PTB trees, binarised as in J&W §3.3."""

import re
from pathlib import Path

import pandas as pd

from attnexp.datasets.tokenize import clean_sst

_LEAF = re.compile(r"\(\d+ ([^()]+)\)")
_ROOT = re.compile(r"^\((\d) ")


def tree_leaves(tree: str) -> list[str]:
    return _LEAF.findall(tree)


def root_label(tree: str) -> int:
    match = _ROOT.match(tree)
    if not match:
        raise ValueError(f"not a labelled PTB tree: {tree[:60]!r}")
    return int(match.group(1))


def read_sst(files: dict[str, Path]) -> pd.DataFrame:
    """Root labels 0,1 -> 0 and 3,4 -> 1; neutral roots dropped; text = cleaned leaves."""
    rows = []
    for split, path in files.items():
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if not line.strip():
                continue
            try:
                label = root_label(line)
            except ValueError as err:
                raise ValueError(f"{path}:{i + 1}: {err}; is this a truncated or corrupt SST file?") from None
            if label == 2:
                continue
            rows.append((split, clean_sst(" ".join(tree_leaves(line))), int(label > 2), f"{split}-{i}"))
    return pd.DataFrame(rows, columns=["split", "text", "label", "key"])
