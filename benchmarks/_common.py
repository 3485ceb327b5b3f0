"""What the Hugging Face analysis benchmarks (bench_hf_decode.py, bench_prompted.py, bench_hf_job.py) share: the
workload's options, the random model's shape options and the input, random id sentences with SST-like lengths batched
as the analyses job batches them, the machine's measured matmul rate and the per-stage table of seconds, FLOPs and
peak memory. Not a benchmark: the scripts import it (run as `python benchmarks/<script>.py`, this folder is first on
the path)."""

import argparse
import resource
import time

import numpy as np
import pandas as pd
import torch

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


def model_shape_options(
    parser: argparse.ArgumentParser,
    layers: int,
    width: int,
    heads: int,
    kv_heads: int | None = None,
    intermediate: int | None = None,
    vocab: int | None = None,
) -> None:
    """The random model's shape as options, with these defaults: --layers, --width, --heads, then --kv-heads,
    --intermediate and --vocab where a default is given."""
    parser.add_argument("--layers", type=int, default=layers)
    parser.add_argument("--width", type=int, default=width)
    parser.add_argument("--heads", type=int, default=heads)
    for option, default in (("--kv-heads", kv_heads), ("--intermediate", intermediate), ("--vocab", vocab)):
        if default is not None:
            parser.add_argument(option, type=int, default=default)


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


def matmul_rate(threads: int, width: int, inner: int, seconds: float = 2.0) -> float:
    """The machine's fp32 matmul rate (FLOP/s) at `threads`: the best of the model's own MLP shapes ([rows, width] x
    [width, inner] and back, at 512 and 2,048 rows), each timed for `seconds` / 4 (one shape alone read 115 GFLOP/s on
    a machine whose heavy stages then ran at 145)."""
    torch.set_num_threads(threads)
    best = 0.0
    for rows, left, right in ((512, width, inner), (2048, width, inner), (2048, inner, width), (512, inner, width)):
        a, b = torch.randn(rows, left), torch.randn(left, right)
        for _ in range(3):
            a @ b
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / 4:
            a @ b
            count += 1
        best = max(best, 2 * rows * left * right * count / (time.perf_counter() - start))
    return best


def peak_gib() -> float:
    """The process's peak resident memory so far, GiB (Linux's ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


class Stages:
    """Seconds and floating-point operations per named stage, summed over its calls in order of first call, with the
    process's peak memory after its last call; `table` prints them beside the measured matmul rate."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.flops: dict[str, float] = {}
        self.peaks: dict[str, float] = {}
        self.uncounted: set[str] = set()

    def timed(self, name: str, work: float, fn, counted: bool = True):
        """`fn()`, timed under `name`, with `work` FLOPs (0: a stage that runs no model, printed without a rate);
        `counted=False`: a part of another stage measured alone, left out of the total."""
        if not counted:
            self.uncounted.add(name)
        start = time.perf_counter()
        out = fn()
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
        self.flops[name] = self.flops.get(name, 0.0) + work
        self.peaks[name] = peak_gib()
        return out

    def table(self, rate: float) -> None:
        print(f"{'stage':<22}{'seconds':>9}{'GFLOP':>10}{'GFLOP/s':>9}{'of matmul':>11}{'peak GiB':>10}")
        for name, seconds in self.seconds.items():
            if self.flops[name] == 0:
                print(f"{name:<22}{seconds:>9.1f}{'-':>10}{'-':>9}{'-':>11}{self.peaks[name]:>10.2f}")
                continue
            achieved = self.flops[name] / seconds
            print(
                f"{name:<22}{seconds:>9.1f}{self.flops[name] / 1e9:>10.0f}{achieved / 1e9:>9.1f}{achieved / rate:>10.0%}"
                f"{self.peaks[name]:>10.2f}"
            )
        print(f"{'total':<22}{sum(s for name, s in self.seconds.items() if name not in self.uncounted):>9.1f}")
