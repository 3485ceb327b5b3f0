"""Time a W&P base epoch against a consistent-adversary epoch (issue 38 §2: at most 1.2x), split into the train
pass and the epoch's selection evaluation, in alternating rounds on one thread.

    PYTHONPATH=src python benchmarks/wp_adversary_epoch.py results/preprocessed/sst [--rounds 2] [--lam 1]
    PYTHONPATH=src python benchmarks/wp_adversary_epoch.py results/preprocessed/sst --profile   # cProfile, 1 round
    PYTHONPATH=src python benchmarks/wp_adversary_epoch.py results/preprocessed/sst --rounds 1 --adv-epochs 6 --probe
    PYTHONPATH=src python benchmarks/wp_adversary_epoch.py results/preprocessed/sst --stress   # denormals, synthetic

`--probe` prints after each adversary epoch the share of its train attention weights that are subnormal floats and
the time of 20 fixed forward-backward batches with and without `torch.set_flush_denormal(True)` (excluded from
the epoch's times); `--stress` (alone) times such batches of 250-token inputs with the attention's v scaled up, the way an
adversary's attention peaks. Only public functions are used, so the script also times an older checkout's code
(`PYTHONPATH=<that checkout>/src`).
"""

import argparse
import cProfile
import pstats
import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

from attnexp.analyses.divergences import kl_divergence
from attnexp.analyses.wp.consistent_adversary import AdversaryObjective, ConsistentAdversary, adversary_loss, adversary_terms
from attnexp.analyses.wp.donors import DonorTable, donor_outputs
from attnexp.analyses.wp.settings import VARIANTS
from attnexp.config import PACKAGED_SCHEMA, validate_config
from attnexp.data.batching import Batch
from attnexp.data.preprocess import read_preprocessed, split_frame
from attnexp.datasets import get_dataset
from attnexp.models.train import Classification, evaluation_batches, fit, model_from_options
from attnexp.pipeline.settings import fit_settings

REPO = Path(__file__).resolve().parents[1]
SEED = 10  # the W&P base seed
TINY = torch.finfo(torch.float32).tiny


class Timed:
    """An objective whose `evaluate` is timed (and, for the adversary, optionally followed by a probe)."""

    def __init__(self, objective, probe=None):
        self.objective, self.probe, self.evaluations, self.probes = objective, probe, [], []

    def __getattr__(self, name):
        return getattr(self.objective, name)

    def evaluate(self, model, train_loss):
        start = time.perf_counter()
        result = self.objective.evaluate(model, train_loss)
        self.evaluations.append(time.perf_counter() - start)
        start = time.perf_counter()
        if self.probe is not None:
            self.probe(model)
        self.probes.append(time.perf_counter() - start)
        return result


def subnormal_share(attention: torch.Tensor) -> float:
    """The share of the attention's non-zero weights that are subnormal floats."""
    nonzero = attention > 0
    return float((nonzero & (attention < TINY)).sum()) / max(int(nonzero.sum()), 1)


def step_seconds(model, batches: list[Batch], loss_of, flush: bool) -> float:
    """Seconds of forward and backward over `batches` (no optimizer step; gradients cleared after)."""
    torch.set_flush_denormal(flush)
    model.train()
    start = time.perf_counter()
    for batch in batches:
        loss_of(model, batch).backward()
    seconds = time.perf_counter() - start
    model.zero_grad(set_to_none=True)
    torch.set_flush_denormal(False)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("preprocessed", help="a preprocessed dataset folder (instances.parquet, meta.json)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--lam", type=float, default=1.0)
    parser.add_argument("--adv-epochs", type=int, default=1, help="adversary epochs per round")
    parser.add_argument("--profile", action="store_true", help="cProfile one base and one adversary epoch")
    parser.add_argument("--probe", action="store_true", help="subnormal attention weights after each adversary epoch")
    parser.add_argument("--stress", action="store_true", help="time long inputs with a peaked attention, flush on/off")
    parser.add_argument("--configfile", default=str(REPO / "config" / "paper.yaml"), help="settings of the W&P runs")
    args = parser.parse_args()
    torch.set_num_threads(1)
    folder = Path(args.preprocessed)
    instances, meta = read_preprocessed(folder / "instances.parquet", folder / "meta.json")
    spec = get_dataset(meta["dataset"])
    hp = {"batch_size": spec.batch_size, "embedding_dim": spec.embedding_dim, "hidden_size": spec.hidden_size}
    config = validate_config(yaml.safe_load(Path(args.configfile).read_text()), PACKAGED_SCHEMA)
    settings = replace(fit_settings(config, seed=SEED, paper="wp", hyperparameters={**hp, "epochs": 1}), device="cpu")
    quiet = lambda _: None  # noqa: E731
    fresh = lambda: model_from_options(meta, *VARIANTS["base"], hp, config["model"], SEED)  # noqa: E731
    train = split_frame(instances, "train")
    print(f"{meta['dataset']}: {len(train)} train rows, load {Path('/proc/loadavg').read_text().split()[:3]}")
    if args.stress:
        return stress(fresh(), meta)

    # untimed warm-up (torch's first calls), then the donor: the base after one epoch, as wp_epoch_times.py
    warm = pd.concat([train.iloc[:256], *(split_frame(instances, s).iloc[:64] for s in ("dev", "test"))])
    fit(fresh(), warm, settings, Classification(first_epoch_eligible=True), quiet)
    base = fresh()
    fit(base, instances, settings, Classification(first_epoch_eligible=True), quiet)
    outputs = [donor_outputs(base, split_frame(instances, s)) for s in ("train", "dev", "test")]
    donor = DonorTable.from_frames(pd.concat(a for _, a in outputs), pd.concat(p for p, _ in outputs))
    objective = AdversaryObjective(lam=args.lam, max_epochs=args.adv_epochs, patience=args.adv_epochs)
    loss_of = lambda model, batch: adversary_loss(*adversary_terms(model, batch, donor), args.lam)  # noqa: E731
    fixed = evaluation_batches(train.iloc[: 20 * 32], batch_size=32)

    def probe(model) -> None:
        with torch.no_grad():
            model.eval()
            shares = [subnormal_share(model(b).attention) for b in evaluation_batches(train.iloc[:2048])]
        plain, flushed = step_seconds(model, fixed, loss_of, False), step_seconds(model, fixed, loss_of, True)
        v = model.attention.v.weight.abs().sum().item()
        share = statistics.mean(shares)
        print(f"  probe: subnormal weights {share:.2e}, |v|_1 {v:.1f}, 20 steps {plain:.2f} s, flushed {flushed:.2f} s")

    times = {"base epoch": [], "base evaluation": [], "adversary epoch": [], "adversary evaluation": []}
    for number in range(1 if args.profile else args.rounds):
        for kind in ("base", "adversary"):
            if kind == "base":
                timed, epochs = Timed(Classification(first_epoch_eligible=True)), settings
            else:
                timed = Timed(ConsistentAdversary(objective, donor), probe if args.probe else None)
                epochs = replace(settings, epochs=args.adv_epochs)
            profiler = cProfile.Profile() if args.profile else None
            if profiler:
                profiler.enable()
            history = fit(fresh(), instances, epochs, timed, quiet).history
            if profiler:
                profiler.disable()
                print(f"--- {kind}: cProfile, top 18 by own time")
                pstats.Stats(profiler).sort_stats("tottime").print_stats(18)
            seconds = (history["seconds"] - np.array(timed.probes)).tolist()
            times[f"{kind} epoch"] += seconds
            times[f"{kind} evaluation"] += timed.evaluations
            shown = lambda values: [round(s, 2) for s in values]  # noqa: E731
            print(f"round {number + 1} {kind}: epochs {shown(seconds)} s, evaluation {shown(timed.evaluations)} s")
    medians = {k: statistics.median(v) for k, v in times.items()}
    print("medians: " + ", ".join(f"{k} {v:.2f} s" for k, v in medians.items()))
    print(f"adversary / base epoch: {medians['adversary epoch'] / medians['base epoch']:.3f}")
    print(f"load after: {Path('/proc/loadavg').read_text().split()[:3]}")


def stress(model, meta: dict, length: int = 250, batches: int = 6) -> None:
    """Forward-backward of the adversarial loss on random `length`-token inputs against uniform targets, with the
    attention's v scaled up (peaked attention: weights down in the subnormal range), flush-to-zero off and on."""
    rng = np.random.default_rng(0)
    n = batches * 32
    rows = pd.DataFrame(
        {
            "instance_id": [f"s{i}" for i in range(n)],
            "tokens": [[2, *rng.integers(4, len(meta["vocab"]), size=length).tolist(), 3] for _ in range(n)],
            "label": np.arange(n) % 2,
            "length": length,
        }
    )
    fixed = evaluation_batches(rows, batch_size=32)
    uniform = lambda b: torch.where(b.real_mask, 1.0 / length, 0.0)  # noqa: E731
    loss_of = lambda m, b: -kl_divergence(m(b).attention, uniform(b)).sum()  # noqa: E731
    weight = model.attention.v.weight.detach().clone()
    for scale in (1, 30, 100, 300, 1000):
        with torch.no_grad():
            model.attention.v.weight.copy_(weight * scale)
            share = statistics.mean(subnormal_share(model(b).attention) for b in fixed)
        plain, flushed = step_seconds(model, fixed, loss_of, False), step_seconds(model, fixed, loss_of, True)
        print(f"stress: v x{scale}: subnormal weights {share:.2e}, {batches} steps {plain:.2f} s, flushed {flushed:.2f} s")


if __name__ == "__main__":
    main()
