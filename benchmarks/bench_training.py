"""Training speed: seconds per epoch of `attnexp.models.train.fit` against a floor, per dataset and encoder.

Usage: PYTHONPATH=src python benchmarks/bench_training.py [--raw-dir ../shared/data] [--datasets sst imdb]
       [--encoders lstm cnn average] [--repeats 3] [--threads 1] [--max-train N] [--device cpu]

The floor is a minimal plain-PyTorch loop over the same model (same initial weights), the same optimisers
and the same batches (J&W's length-noise order), with every batch already collated as tensors before the
clock starts: forward, loss, backward, step for each training batch, then one no-grad forward pass over the
selection (dev) split, which model selection needs every epoch. Ours is one `fit` epoch as its training log
records it (training, dev evaluation, keeping the weights). Floor and ours alternate in one process, so the
ratio is robust to the load of a shared machine; the table prints the median of each over `--repeats`.
`--max-train` trains on the first N training instances (and the first N/4 dev ones) of a dataset: an IMDB
BiLSTM epoch is several minutes on 2 cores. A measurement, not a test.
"""

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from attnexp.data.batching import collate, length_noise_batches, sequential_batches
from attnexp.data.preprocess import preprocess, split_frame
from attnexp.datasets import get_dataset
from attnexp.models.settings import FitSettings
from attnexp.models.train import Classification, build_model, build_optimizers, fit

REPO = Path(__file__).resolve().parents[1]


def subset(instances, max_train: int | None):
    """The first `max_train` training and `max_train // 4` dev and test instances."""
    if not max_train:
        return instances
    train = instances.index[instances["split"] == "train"][:max_train]
    held = [instances.index[instances["split"] == s][: max(1, max_train // 4)] for s in ("dev", "test")]
    return instances.loc[train.union(held[0]).union(held[1])].reset_index(drop=True)


def floor_epoch(model, instances, settings: FitSettings, device: torch.device) -> float:
    """One epoch of the minimal loop (batches collated and on the device before the clock starts)."""
    train_rows, dev_rows = split_frame(instances, "train"), split_frame(instances, settings.select_on)
    rng = np.random.default_rng(settings.seed)
    batches = [
        collate(train_rows.iloc[i]).to(device)
        for i in length_noise_batches(train_rows["length"].to_numpy(), settings.batch_size, rng)
    ]
    dev_batches = [b.to(device) for b in sequential_batches(dev_rows, 128)]
    objective = Classification()
    objective.start(model, instances, train_rows, settings)
    optimizers = build_optimizers(model, settings)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    model.train()
    for batch in batches:
        loss = objective.loss(model, batch)
        for opt in optimizers:
            opt.zero_grad()
        loss.backward()
        for opt in optimizers:
            opt.step()
    model.eval()
    with torch.no_grad():
        for batch in dev_batches:
            model.distribution(model(batch).logits).cpu()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def ours_epoch(model, instances, settings: FitSettings) -> float:
    """One `fit` epoch, as its training log times it."""
    result = fit(model, instances, settings, progress=lambda _: None)
    return float(result.history["seconds"].iloc[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw-dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--datasets", nargs="+", default=["sst", "imdb"])
    parser.add_argument("--encoders", nargs="+", default=["lstm", "cnn", "average"])
    parser.add_argument("--attention", default="tanh")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-train", type=int, nargs="+", default=[0], help="per dataset; 0: all")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--padded-lstm", action="store_true", help="ours with `padded_lstm: true` (the floor: packed)")
    parser.add_argument("--loop-adam", action="store_true", help="both with `fused_adam: false` (per-parameter Adam)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    # fields that older mains lack are left out, so the script also measures them
    new_fields = {"device": str(device), "padded_lstm": args.padded_lstm, "fused_adam": not args.loop_adam, "amsgrad": True}
    new_fields = {k: v for k, v in new_fields.items() if k in FitSettings.__dataclass_fields__}
    limits = dict(zip(args.datasets, args.max_train + [args.max_train[-1]] * len(args.datasets), strict=False))

    print(f"threads {args.threads}, device {device}, median of {args.repeats}")
    print(f"{'dataset':<8} {'model':<14} {'train n':>7} {'batches':>7} {'ours s':>8} {'floor s':>8} {'ours/floor':>10}")
    for name in args.datasets:
        spec = get_dataset(name)
        instances, meta = preprocess(spec, args.raw_dir)
        instances = subset(instances, limits[name])
        n_train = int((instances["split"] == "train").sum())
        for encoder in args.encoders:
            settings = FitSettings(
                epochs=1,
                batch_size=spec.batch_size,
                seed=0,
                select_on="dev",
                deterministic=True,
                learning_rate=1e-3,
                weight_decay=1e-5,
                **new_fields,
            )
            ours, floor = [], []
            for _ in range(args.repeats):
                model = build_model(meta, encoder, args.attention, spec.embedding_dim, spec.hidden_size, seed=0).to(device)
                floor.append(floor_epoch(model, instances, settings, device))
                model = build_model(meta, encoder, args.attention, spec.embedding_dim, spec.hidden_size, seed=0)
                ours.append(ours_epoch(model, instances, settings))
            o, f = statistics.median(ours), statistics.median(floor)
            n_batches = -(-n_train // spec.batch_size)
            print(
                f"{name:<8} {encoder + '-' + args.attention:<14} {n_train:>7} {n_batches:>7} {o:>8.2f} {f:>8.2f} {o / f:>10.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
