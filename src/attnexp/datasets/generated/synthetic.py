"""Embedded offline datasets, generated deterministically from a seed in the real datasets' raw formats.

- bAbI tasks 1-3 from a small world simulation (generated/babi.py);
- a planted-rationale binary classification set and planted-rationale sentence pairs (generated/planted.py).
"""

from pathlib import Path

from attnexp.datasets.generated.babi import write_babi
from attnexp.datasets.generated.planted import write_planted_nli, write_planted_sentiment


def generate(family: str, outputs: list[str], seed: int, options: dict) -> list[Path]:
    """Write one synthetic family's raw files; `outputs` are the expected paths (checked)."""
    if family == "sentiment":
        written = [write_planted_sentiment(outputs[0], seed=seed, **options)]
    elif family == "nli":
        written = write_planted_nli(Path(outputs[0]).parent, seed=seed, **options)
    elif family == "babi":
        root = Path(outputs[0]).parents[1]
        statements = {int(k.removeprefix("qa")): v for k, v in options["statements"].items()}
        written = write_babi(root, seed, options["n_train"], options["n_test"], statements, options.get("questions_per_story", 2))
    else:
        raise ValueError(f"unknown synthetic family {family!r}; choose sentiment, nli or babi")
    missing = sorted(set(map(str, outputs)) - set(map(str, written)))
    if missing:
        raise RuntimeError(f"generator for {family!r} did not write {missing}")
    for path in written:
        print(f"wrote {path}")
    return written
