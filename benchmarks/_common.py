"""What the Hugging Face analysis benchmarks (bench_hf_decode.py, bench_prompted.py) share: the workload's options
and its input, random id sentences with SST-like lengths batched as the analyses job batches them. Not a benchmark:
the scripts import it (run as `python benchmarks/<script>.py`, this folder is first on the path)."""

import argparse

import numpy as np
import pandas as pd

from attnexp.data.batching import Batch, collate


def workload_parser(description: str) -> argparse.ArgumentParser:
    """A parser with the workload's options: --sentences, --permutations (100, as the analyses), --threads and
    --batch-size (50 sentences a batch)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sentences", type=int, default=100)
    parser.add_argument("--permutations", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=50)
    return parser


def sentences(n: int, vocab: int, seed: int, first: int, last: int, lowest: int) -> list[list[int]]:
    """`n` random id sequences `first` ... `last`, the ids between drawn from [`lowest`, `vocab`), with SST-like
    lengths in sub-tokens (SST's test split: log-normal, mean ~23, 4..60)."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(np.rint(rng.lognormal(np.log(20.0), 0.5, n)), 4, 60).astype(int)
    return [[first, *rng.integers(lowest, vocab, size=k).tolist(), last] for k in lengths]


def sentence_batches(ids: list[list[int]], batch_size: int) -> tuple[pd.DataFrame, list[Batch]]:
    """The sentences as instance rows (label 0, ids "0", "1", ...) and those rows collated `batch_size` at a time."""
    frame = pd.DataFrame({"tokens": ids, "label": [0] * len(ids), "instance_id": [str(i) for i in range(len(ids))]})
    return frame, [collate(frame.iloc[i : i + batch_size]) for i in range(0, len(ids), batch_size)]
