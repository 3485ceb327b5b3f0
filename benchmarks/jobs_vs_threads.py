"""Two training jobs with one torch thread each, side by side, against one job with two threads running both.

    PYTHONPATH=src python benchmarks/jobs_vs_threads.py [--raw-dir ../shared/data] [--datasets sst imdb]
        [--encoders lstm average] [--max-train 1600]

For each dataset and encoder: two one-epoch training runs (seeds 0 and 1, the first `--max-train` training
instances) (a) as two processes with `torch.set_num_threads(1)` at the same time, (b) one after the other in one
process with two threads. Prints both wall times and their ratio: below 1, two threads per job finish the pair
sooner; above 1, more jobs with one thread each are the better use of the cores (Snakemake's `--cores N` with
`threads: {train: 1}`). A measurement, not a test: run it on a quiet machine with at least 2 free cores.
"""

import argparse
import multiprocessing
import tempfile
import time
from pathlib import Path

import torch

from attnexp.io import write_parquet

REPO = Path(__file__).resolve().parents[1]


def train_once(instances_path: str, meta: dict, encoder: str, seeds: list[int], threads: int) -> float:
    """Wall seconds of one training epoch per seed in `seeds`, one after the other, with `threads` torch threads."""
    import pandas as pd

    from attnexp.datasets import get_dataset
    from attnexp.models.settings import FitSettings
    from attnexp.models.train import build_model, fit

    torch.set_num_threads(threads)
    instances = pd.read_parquet(instances_path)
    spec = get_dataset(meta["dataset"])
    start = time.perf_counter()
    for seed in seeds:
        model = build_model(meta, encoder, "tanh", spec.embedding_dim, spec.hidden_size, seed=seed)
        settings = FitSettings(
            epochs=1,
            batch_size=spec.batch_size,
            seed=seed,
            select_on="dev",
            deterministic=True,
            learning_rate=1e-3,
            weight_decay=1e-5,
            device="cpu",
            padded_lstm=False,
            fused_adam=False,
            amsgrad=True,
        )
        fit(model, instances, settings, progress=lambda _: None)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw-dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--datasets", nargs="+", default=["sst", "imdb"])
    parser.add_argument("--encoders", nargs="+", default=["lstm", "average"])
    parser.add_argument("--max-train", type=int, default=1600)
    args = parser.parse_args()

    from bench_training import subset  # the same subset as the training benchmark

    from attnexp.data.preprocess import preprocess
    from attnexp.datasets import get_dataset

    context = multiprocessing.get_context("spawn")
    print(f"{'dataset':<8} {'model':<14} {'2 jobs x 1 thread s':>20} {'1 job x 2 threads s':>20} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp, context.Pool(2) as pool:
        for name in args.datasets:
            instances, meta = preprocess(get_dataset(name), args.raw_dir)
            path = str(Path(tmp) / f"{name}.parquet")
            write_parquet(path, subset(instances, args.max_train))
            for encoder in args.encoders:
                start = time.perf_counter()
                pool.starmap(train_once, [(path, meta, encoder, [seed], 1) for seed in (0, 1)])
                parallel = time.perf_counter() - start
                serial = pool.apply(train_once, (path, meta, encoder, [0, 1], 2))
                print(
                    f"{name:<8} {encoder + '-tanh':<14} {parallel:>20.1f} {serial:>20.1f} {serial / parallel:>6.2f}", flush=True
                )


if __name__ == "__main__":
    main()
