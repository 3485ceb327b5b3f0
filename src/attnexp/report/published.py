"""The values the papers printed (`published_values.csv`, a data file of this package) and which grid models can
meet them. Import-light (csv, no pandas): the workflow calls `compared` at parse time to pick the inputs of the
`paper_comparison` table; `attnexp.report.comparison` builds the table itself."""

import csv
from collections.abc import Mapping, Sequence
from importlib import resources

from attnexp.datasets import DATASETS, DatasetSpec

PUBLISHED_VALUES = "published_values.csv"  # the data file, inside this package (attnexp.report)


def published_rows() -> list[dict[str, str]]:
    """The data file's rows as strings (checked and typed by `comparison.published_values`)."""
    with resources.files("attnexp.report").joinpath(PUBLISHED_VALUES).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def paper_dataset(name: str, published: Sequence[str], specs: Mapping[str, DatasetSpec] = DATASETS) -> str | None:
    """The published dataset a grid dataset stands for: itself, for a fallback variant (agnews_testonly, babi3_1k,
    snli_devtrain) the dataset it replaces, for a generated substitute its `stands_for` (syn_agreement: A&Z's
    linzen_agreement); None for other generated data and datasets the papers lack (or `specs`, default the built-in
    registry, lacks)."""
    spec = specs.get(name)
    if spec is not None and spec.stands_for is not None:
        return spec.stands_for if spec.stands_for in published else None
    if spec is None or spec.synthetic is not None:
        return None
    if name in published:
        return name
    return next((key for key in sorted(published, key=len, reverse=True) if name.startswith(f"{key}_")), None)


def compared(datasets: Sequence[str], paper: str, specs: Mapping[str, DatasetSpec] = DATASETS) -> dict[str, list[str]]:
    """Grid dataset -> the models ("encoder-attention") with published values of `paper` on it; datasets without any
    are left out, so that generated data compares nothing and needs no input, unless it stands for a paper's dataset
    (`paper_dataset`). `specs`: the datasets the grid knows (default: the built-in registry)."""
    rows = [row for row in published_rows() if row["paper"] == paper]
    names = list(dict.fromkeys(row["dataset"] for row in rows))
    found = {}
    for name in datasets:
        key = paper_dataset(name, names, specs)
        if key is not None:
            found[name] = list(dict.fromkeys(row["model"] for row in rows if row["dataset"] == key))
    return found
