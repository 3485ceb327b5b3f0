"""Measure one epoch of every W&P run type on a preprocessed dataset and extrapolate each test's CPU time.

    PYTHONPATH=src python benchmarks/wp_epoch_times.py results/preprocessed/sst [--seeds 8 --lambdas 5 --adv-epochs 80]
        [--test-sample 200] [--configfile config/paper.yaml]

Prints seconds per epoch (1 thread) for base, uniform, the trained and the guided MLP and the consistent adversary,
the J&W per-instance adversary on 200 test instances, and the serial CPU time of each of the four tests.
"""

import argparse
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch
import yaml

from attnexp.analyses.jw.instances import adversary_table
from attnexp.analyses.wp.consistent_adversary import AdversaryObjective, train_consistent_adversary
from attnexp.analyses.wp.donors import DonorTable, GuidedClassifier, donor_outputs
from attnexp.analyses.wp.settings import VARIANTS
from attnexp.config import PACKAGED_SCHEMA, validate_config
from attnexp.data.preprocess import read_preprocessed, split_frame
from attnexp.datasets import get_dataset
from attnexp.models.train import Classification, fit, model_from_options
from attnexp.pipeline.settings import analysis_settings, fit_settings

REPO = Path(__file__).resolve().parents[1]
SCHEMA = PACKAGED_SCHEMA
SEED = 10  # the W&P base seed


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("preprocessed", help="a preprocessed dataset folder (instances.parquet, meta.json)")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--lambdas", type=int, default=5)
    parser.add_argument("--adv-epochs", type=int, default=80, help="adversary epochs assumed (80 = no early stop)")
    parser.add_argument("--test-sample", type=int, default=200, help="test instances timed for the J&W adversary")
    parser.add_argument("--configfile", default=str(REPO / "config" / "paper.yaml"), help="settings of the W&P runs")
    args = parser.parse_args()
    torch.set_num_threads(1)
    instances, meta = read_preprocessed(Path(args.preprocessed) / "instances.parquet", Path(args.preprocessed) / "meta.json")
    spec = get_dataset(meta["dataset"])
    hp = {"batch_size": spec.batch_size, "embedding_dim": spec.embedding_dim, "hidden_size": spec.hidden_size}
    # the settings a W&P job gets from the config (device, padded_lstm, fused_adam, ...), for a one-epoch run
    config = validate_config(yaml.safe_load(Path(args.configfile).read_text()), SCHEMA)
    settings = replace(fit_settings(config, seed=SEED, paper="wp", hyperparameters={**hp, "epochs": 1}), device="cpu")
    quiet = lambda _: None  # noqa: E731
    train = lambda model, instances, settings, progress: fit(  # noqa: E731
        model, instances, settings, Classification(first_epoch_eligible=True), progress
    )
    model = lambda variant: model_from_options(meta, *VARIANTS[variant], hp, config["model"], SEED)  # noqa: E731

    base = model("base")
    seconds = {"base": timed(lambda: train(base, instances, settings, quiet))}
    outputs = {}
    seconds["donor_outputs"] = timed(
        lambda: outputs.update({s: donor_outputs(base, split_frame(instances, s)) for s in ("train", "dev", "test")})
    )
    donor = DonorTable.from_frames(pd.concat(a for _, a in outputs.values()), pd.concat(p for p, _ in outputs.values()))
    seconds["uniform"] = timed(lambda: train(model("uniform"), instances, settings, quiet))
    seconds["mlp_trained"] = timed(lambda: train(model("mlp_trained"), instances, settings, quiet))
    guided = GuidedClassifier(model("mlp_uniform").config, donor)
    seconds["mlp_guided"] = timed(lambda: train(guided, instances, settings, quiet))
    objective = AdversaryObjective(lam=1.0, max_epochs=1, patience=1)
    seconds["adversary"] = timed(lambda: train_consistent_adversary(model("base"), instances, donor, settings, objective, quiet))
    test = split_frame(instances, "test")
    sample = test.iloc[: args.test_sample]
    analysis = replace(analysis_settings(config, spec.batch_size), device="cpu")
    jw = timed(lambda: adversary_table(base, sample, analysis, seed=1))
    print(
        f"{meta['dataset']}: {spec.epochs} epochs; seconds per epoch (1 thread): "
        + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items())
    )
    print(f"J&W per-instance adversary: {jw:.1f} s per {len(sample)} test instances ({len(test)} in test)")
    run = lambda kind: spec.epochs * seconds[kind] + seconds["donor_outputs"]  # noqa: E731
    tests = {
        "1 uniform (base + uniform)": run("base") + run("uniform"),
        f"2 seeds ({args.seeds} extra + J&W adversary)": args.seeds * run("base") + jw * len(test) / max(len(sample), 1),
        "3 diagnostic MLP (4 guides)": 3 * run("mlp_guided") + run("mlp_trained"),
        f"4 adversary ({args.lambdas} lambdas x {args.adv_epochs} epochs)": args.lambdas
        * (args.adv_epochs * seconds["adversary"] + seconds["donor_outputs"]),
    }
    for name, value in tests.items():
        print(f"test {name}: {value / 60:.1f} CPU minutes")


if __name__ == "__main__":
    main()
