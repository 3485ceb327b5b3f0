"""Predict the cost of the paper grid (`config/paper.yaml`) from a few measured batches per dataset.

    PYTHONPATH=src python benchmarks/paper_grid_cost.py [--raw-dir ../shared/data] [--datasets sst imdb]
        [--batches 8] [--test-sample 64] [--cores 8] [--threads 1] [--configfile config/paper.yaml]

For every dataset of the grid whose raw data is available it preprocesses the data (timed in full), then times one
training epoch of every encoder x attention on `--batches` batches of the train split (the dev split scaled down
in proportion), the J&W analyses (importance, permutation, adversary) on `--test-sample` test instances, and,
for W&P's datasets, one epoch of each W&P run type. Per-batch and per-instance costs are scaled to the full
splits, the registry's epochs and the config's seeds, lambdas and adversary epochs (80 epochs: no early stop, an
upper bound). Prints CPU-hours per dataset and stage, and the predicted wall time on `--cores` cores (total / cores,
but never less than the longest single job). A measurement, not a test: run it on a quiet machine.
"""

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import torch
import yaml

from attnexp.analyses.jw.instances import adversary_table, importance_table, permutation_table
from attnexp.analyses.wp.consistent_adversary import AdversaryObjective, train_consistent_adversary
from attnexp.analyses.wp.donors import DonorTable, GuidedClassifier, donor_outputs
from attnexp.analyses.wp.settings import VARIANTS
from attnexp.config import PACKAGED_SCHEMA, validate_config
from attnexp.data.preprocess import preprocess, split_frame
from attnexp.datasets import get_dataset, policy
from attnexp.datasets.acquire import missing_data
from attnexp.models.settings import FitSettings
from attnexp.models.train import Classification, fit, model_from_options
from attnexp.pipeline.settings import analysis_settings, fit_settings, resolved, wp_settings

REPO = Path(__file__).resolve().parents[1]
SCHEMA = PACKAGED_SCHEMA
QUIET = lambda _: None  # noqa: E731


def timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def subsample(instances: pd.DataFrame, fraction: float, test_rows: int) -> pd.DataFrame:
    """The same fraction of the train and dev splits (a training epoch's work scales with both) and a few test
    rows (fit scores the test split once at the end)."""
    parts = [split_frame(instances, s).sample(frac=fraction, random_state=0) for s in ("train", "dev")]
    return pd.concat([*parts, split_frame(instances, "test").head(test_rows)])


def epoch_seconds(train: Callable[[pd.DataFrame], object], instances: pd.DataFrame, fraction: float) -> float:
    """Seconds of one full epoch: the slope between epochs on `fraction` and on 2 x `fraction` of the data, so
    that fixed costs (warm-up, optimiser set-up, copying the best weights) are not scaled up with the epoch.

    Each size is timed twice and the faster run kept. Where the two sizes differ too little for a slope (it would
    put more than half of the larger run in fixed costs: noise on short runs), the larger run scaled up is used,
    an upper bound, rather than a slope near zero."""
    small, large = (
        min(timed(lambda f=f: train(subsample(instances, f, test_rows=8))) for _ in range(2)) for f in (fraction, 2 * fraction)
    )
    slope, scaled = (large - small) / fraction, large / (2 * fraction)
    return slope if slope > 0.5 * scaled else scaled


def row(dataset: str, stage: str, jobs: int, seconds_per_job: float) -> dict:
    return {"dataset": dataset, "stage": stage, "jobs": jobs, "cpu_s": jobs * seconds_per_job, "longest_s": seconds_per_job}


def train_settings(config: dict, hp: dict, seed: int, paper: str = "jw") -> FitSettings:
    """One epoch of a `paper` run as its job trains it (the configured device resolved here)."""
    return resolved(fit_settings(config, seed=seed, paper=paper, hyperparameters={**hp, "epochs": 1}))


def measure_dataset(name: str, config: dict, args: argparse.Namespace) -> list[dict]:
    """Rows (dataset, stage, jobs, cpu_seconds, longest_job_seconds) for one dataset of the grid."""
    spec = get_dataset(name)
    hp = policy.hyperparameters(name, config["hyperparameters"])
    rows: list[dict] = []
    instances = meta = None

    def run_preprocess() -> None:
        nonlocal instances, meta
        prep = config["preprocessing"]
        raw = policy.raw_dir(spec, config["data"], REPO)
        instances, meta = preprocess(spec, raw, prep["vocab_fit_on"], prep["implicit_extremes"], config["data"]["user_files"])

    seconds = timed(run_preprocess)
    rows.append(row(name, "preprocess", 1, seconds))
    n_train, n_test = meta["sizes"]["train"], meta["sizes"]["test"]
    fraction = min(0.5, args.batches * hp["batch_size"] / max(n_train, 1))
    test = split_frame(instances, "test").sample(n=min(args.test_sample, n_test), random_state=0)
    analysis = resolved(analysis_settings(config, hp["batch_size"]))
    seeds, epochs = len(config["seeds"]), hp["epochs"]
    print(f"{name}: train {n_train}, test {n_test}, {fraction:.3f} of train/dev timed, {len(test)} test rows", flush=True)

    for encoder in config["encoders"]:
        for attention in config["attentions"]:
            model = model_from_options(meta, encoder, attention, hp, config["model"], seed=0)
            settings = train_settings(config, hp, 0)
            epoch = epoch_seconds(lambda rows, m=model, s=settings: fit(m, rows, s, progress=QUIET), instances, fraction)
            per_test = {
                "importance": timed(lambda m=model: importance_table(m, test, analysis)),
                "permutation": timed(lambda m=model: permutation_table(m, test, analysis, torch.Generator().manual_seed(0))),
                "adversary": timed(lambda m=model: adversary_table(m, test, analysis, seed=1)),
            }
            analyse = sum(per_test.values()) * n_test / len(test)
            label = f"{encoder}-{attention}"
            print(
                f"  {label:<14} {epoch:8.1f} s/epoch x {epochs} epochs; analyses {analyse:8.1f} s "
                + " ".join(f"{k} {v * n_test / len(test):.0f}s" for k, v in per_test.items()),
                flush=True,
            )
            rows += [row(name, "train", seeds, epochs * epoch), row(name, "jw_analyses", seeds, analyse)]
    if name in config["wp"]["datasets"] and spec.task == "bc":
        rows += measure_wp(name, config, hp, instances, meta, fraction, analysis, test)
    return rows


def measure_wp(name, config, hp, instances, meta, fraction, analysis, test) -> list[dict]:
    """W&P's four tests: one epoch of each run type on the same subsample, scaled to the config's grid."""
    wp = wp_settings(config)
    settings = train_settings(config, hp, wp.base_seed, paper="wp")
    model = lambda variant: model_from_options(meta, *VARIANTS[variant], hp, config["model"], wp.base_seed)  # noqa: E731
    objective = Classification(first_epoch_eligible=True)
    per_epoch = lambda build: epoch_seconds(lambda rows: fit(build(), rows, settings, objective, QUIET), instances, fraction)  # noqa: E731
    base = model("base")
    epoch = {"base": per_epoch(lambda: base)}
    outputs = {s: donor_outputs(base, split_frame(instances, s)) for s in ("train", "dev", "test")}
    donor = DonorTable.from_frames(pd.concat(a for _, a in outputs.values()), pd.concat(p for p, _ in outputs.values()))
    epoch["uniform"] = per_epoch(lambda: model("uniform"))
    epoch["mlp"] = per_epoch(lambda: model("mlp_trained"))
    epoch["guided"] = per_epoch(lambda: GuidedClassifier(model("mlp_uniform").config, donor))
    adversary = AdversaryObjective(lam=1.0, max_epochs=1, patience=1)
    epoch["adversary"] = epoch_seconds(
        lambda rows: train_consistent_adversary(model("base"), rows, donor, settings, adversary, QUIET), instances, fraction
    )
    jw = timed(lambda: adversary_table(base, test, analysis, seed=1))
    jw *= len(split_frame(instances, "test")) / len(test)
    epochs, lambdas = hp["epochs"], len(wp.lambdas_for(name))
    print("  W&P s/epoch: " + ", ".join(f"{k} {v:.1f}" for k, v in epoch.items()), flush=True)
    tests = {
        "wp_test1_uniform": (1, epochs * epoch["uniform"]),
        "wp_test2_seeds": (len(wp.seeds), epochs * epoch["base"]),
        "wp_test2_jw_adversary": (wp.jw_adversary_runs, jw),
        "wp_test3_mlp": (len(wp.guides), epochs * max(epoch["mlp"], epoch["guided"])),
        "wp_test4_adversary": (lambdas, wp.adversary.max_epochs * epoch["adversary"]),
    }
    return [row(name, "wp_base", 1, epochs * epoch["base"])] + [row(name, s, n, t) for s, (n, t) in tests.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", default=str(REPO / "config" / "paper.yaml"))
    parser.add_argument("--raw-dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--datasets", nargs="+", help="default: every dataset of the config with local data")
    parser.add_argument("--batches", type=int, default=8, help="train batches timed per model")
    parser.add_argument("--test-sample", type=int, default=64, help="test instances timed per analysis")
    parser.add_argument("--cores", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = yaml.safe_load(Path(args.configfile).read_text())
    config["data"]["raw_data_dir"] = args.raw_dir
    config = validate_config(config, SCHEMA)

    names = args.datasets or config["datasets"]
    rows = []
    for name in names:
        spec = get_dataset(name)
        problem = missing_data(spec, policy.raw_dir(spec, config["data"], REPO), config["data"]["user_files"])
        if problem:
            print(f"{name}: skipped ({problem.splitlines()[0]})", flush=True)
            continue
        rows += measure_dataset(name, config, args)

    table = pd.DataFrame(rows)
    table["cpu_h"] = table["cpu_s"] / 3600
    grouped = table.groupby(["dataset", "stage"], sort=False)
    by_stage = grouped.agg(jobs=("jobs", "sum"), cpu_h=("cpu_h", "sum"), longest_h=("longest_s", "max"))
    by_stage["longest_h"] /= 3600
    print("\npredicted CPU-hours of the grid (1 thread per job)")
    print(by_stage.round(3).to_string())
    total, longest = table["cpu_h"].sum(), table["longest_s"].max() / 3600
    print(f"\ntotal {total:.2f} CPU-hours; longest job {longest:.2f} h")
    print(f"predicted wall time on {args.cores} cores: {max(total / args.cores, longest):.2f} h")


if __name__ == "__main__":
    main()
