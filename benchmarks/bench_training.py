"""Training speed on the embedded default data: seconds per epoch for every encoder x attention.

Usage: python benchmarks/bench_training.py [--datasets syn_sentiment syn_nli] [--epochs 2] [--threads 1]
Generates the default data in a temporary folder (config/config.yaml's `synthetic` section), trains each model
for a few epochs and prints one line per model. A measurement, not a test.
"""

import argparse
import tempfile
import time
from pathlib import Path

import torch
import yaml

from attnexp.data.preprocess import preprocess
from attnexp.datasets import get_dataset
from attnexp.datasets.generated.synthetic import generate
from attnexp.models.train import JW_LEARNING_RATE, JW_WEIGHT_DECAY, TrainSettings, build_model, fit

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["syn_sentiment", "syn_nli", "syn_babi1", "syn_babi3"])
    parser.add_argument("--encoders", nargs="+", default=["lstm", "cnn", "average"])
    parser.add_argument("--attentions", nargs="+", default=["tanh"])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())["synthetic"]

    print(f"{'dataset':<14} {'model':<14} {'train n':>8} {'mean len':>8} {'s/epoch':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets:
            spec = get_dataset(name)
            raw = Path(tmp) / spec.synthetic
            if not raw.exists():
                generate(spec.synthetic, raw, config["seed"], dict(config[spec.synthetic]))
            instances, meta = preprocess(spec, raw)
            n_train = meta["sizes"]["train"]
            for encoder in args.encoders:
                for attention in args.attentions:
                    model = build_model(meta, encoder, attention, spec.embedding_dim, spec.hidden_size, seed=0)
                    start = time.perf_counter()
                    settings = TrainSettings(
                        epochs=args.epochs,
                        batch_size=spec.batch_size,
                        seed=0,
                        select_on="dev",
                        deterministic=True,
                        learning_rate=JW_LEARNING_RATE,
                        weight_decay=JW_WEIGHT_DECAY,
                    )
                    fit(model, instances, settings, progress=lambda _: None)
                    per_epoch = (time.perf_counter() - start) / args.epochs
                    print(
                        f"{name:<14} {encoder + '-' + attention:<14} {n_train:>8} {meta['mean_length']:>8.1f} {per_epoch:>8.2f}"
                    )


if __name__ == "__main__":
    main()
