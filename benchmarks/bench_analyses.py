"""Seconds per 1,000 test instances of each batched analysis, and its speed-up over a per-instance reference.

Usage (after `snakemake --cores 2 models`):
    PYTHONPATH=src python benchmarks/bench_analyses.py [--dataset syn_sentiment] [--model lstm-tanh] [--reference-instances 24]

The references are the plain loops the batched code replaces: one forward per deleted position (the
authors' LOO), one instance at a time for gradient/IG/adversary, one decode per permutation per
instance. They run on an evenly spaced subset of the (length-sorted) test set and are scaled to 1,000
instances. Also printed: permutation and adversary cost in units of one decoder pass over the batch.

The erasure tests' cost against the analyses job (issue 24's targets: +30% of a model's analyses job at the paper's
settings, +20 s over the default grid):
    PYTHONPATH=src python benchmarks/bench_analyses.py --erasure-cost [--configfile config/paper.yaml] --dataset sst
    PYTHONPATH=src python benchmarks/bench_analyses.py --erasure-cost --all-models   # every trained model of the grid
It times the analyses job (`run_analyze`) with the erasure tests switched off, then the erasure tests alone on the
same model and test split (what switching them on adds), and prints both, their ratio and the machine's load.
"""

import argparse
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from attnexp import paths
from attnexp.analyses.divergences import tvd
from attnexp.analyses.jw.adversary import adversarial_attention
from attnexp.analyses.jw.importance import gradient_importance, integrated_gradients, leave_one_out
from attnexp.analyses.jw.permutation import permutation_output_changes, sample_permutations
from attnexp.analyses.jw.settings import AdversarySettings
from attnexp.data.batching import collate, sequential_batches
from attnexp.data.preprocess import split_frame
from attnexp.models.checkpoint import load_model
from attnexp.pipeline.settings import analysis_settings, default_config


def schema_adversary(steps: int) -> AdversarySettings:
    """The schema's default adversary settings (as a run without an `analyses` section gets them), `steps` steps."""
    return replace(analysis_settings(default_config(), batch_size=1).adversary, steps=steps)


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


@torch.no_grad()
def loo_per_position(model, rows) -> None:
    for _, row in rows.iterrows():
        one = collate(rows.loc[[row.name]])
        original = model.distribution(model(one).logits)
        tokens = list(row["tokens"])
        for t in range(1, len(tokens) - 1):
            deleted = rows.loc[[row.name]].copy()
            deleted["tokens"] = [tokens[:t] + tokens[t + 1 :]]
            tvd(model.distribution(model(collate(deleted)).logits), original)


@torch.no_grad()
def permutation_per_instance(model, rows, n_permutations: int) -> None:
    for i in range(len(rows)):
        one = collate(rows.iloc[i : i + 1])
        output = model(one)
        original = model.distribution(output.logits)
        n = int(one.lengths[0]) - 2
        for _ in range(n_permutations):
            index = torch.arange(one.tokens.shape[1])
            index[1 : n + 1] = 1 + torch.randperm(n)
            tvd(model.distribution(model.decode(output.encoded, output.attention[:, index], one)), original)


def per_instance(function, rows) -> None:
    for i in range(len(rows)):
        function(collate(rows.iloc[i : i + 1]))


def erasure_cost(args) -> None:
    """The analyses job without the erasure tests, and what the tests add, per model (and summed)."""
    import yaml

    from attnexp.config import validate_config
    from attnexp.pipeline.plan import Plan
    from attnexp.pipeline.settings import erasure_settings

    raw = yaml.safe_load(Path(args.configfile).read_text())
    erasure = erasure_settings(validate_config(yaml.safe_load(Path(args.configfile).read_text()))) or erasure_settings(
        default_config()
    )
    raw.setdefault("analyses", {}).setdefault("erasure", {})["enabled"] = False  # the job before
    config = validate_config(raw)
    if args.all_models:
        models = Plan.from_config(config, basedir=args.workdir).grid_models()
    else:
        encoder, attention = args.model.split("-")
        models = [{"dataset": args.dataset, "encoder": encoder, "attention": attention, "seed": args.seed}]
    totals = np.zeros(2)
    print(f"load average before: {os.getloadavg()}; {torch.get_num_threads()} thread(s)")
    print(f"{'model':40s} {'instances':>9s} {'job s':>9s} {'erasure s':>9s} {'added':>7s}")
    for m in models:
        if not (args.workdir / paths.model_files(**m)["model"]).exists():
            print(f"{paths.model_files(**m)['model']}: not trained, skipped")
            continue
        instances, before, added = one_model_cost(args, config, erasure, m)
        label = f"{m['dataset']} {m['encoder']}-{m['attention']} seed{m['seed']}"
        print(f"{label:40s} {instances:9d} {before:9.1f} {added:9.1f} {added / before:7.1%}", flush=True)
        totals += (before, added)
    if totals[0]:
        print(f"{'total':40s} {'':9s} {totals[0]:9.1f} {totals[1]:9.1f} {totals[1] / totals[0]:7.1%}")
    print(f"load average after: {os.getloadavg()}")


def one_model_cost(args, config, erasure, m: dict) -> tuple[int, float, float]:
    """(test instances, seconds of the analyses job without erasure, seconds the erasure tests add)."""
    from attnexp.analyses.erasure import JW_RANKINGS
    from attnexp.analyses.erasure.instances import erasure_tables
    from attnexp.analyses.jw.instances import importance_table
    from attnexp.models.encoders import set_padded_lstm
    from attnexp.pipeline.jw import run_analyze
    from attnexp.pipeline.plan import Plan
    from attnexp.pipeline.settings import AnalyzeSettings, resolved

    model_path = args.workdir / paths.model_files(**m)["model"]
    job = AnalyzeSettings.from_plan(
        Plan.from_config(config, basedir=args.workdir), m["dataset"], m["seed"], m["encoder"], m["attention"]
    )
    inputs = {"model": model_path, **{k: args.workdir / v for k, v in paths.preprocessed_files(m["dataset"]).items()}}
    with tempfile.TemporaryDirectory() as folder:
        outputs = {key: Path(folder) / name for key, name in paths.ANALYSIS_FILES.items()}
        start = time.perf_counter()
        run_analyze(inputs=inputs, outputs=outputs, settings=job, threads=args.threads)
        before = time.perf_counter() - start
    settings = resolved(job.analysis)
    model = set_padded_lstm(load_model(model_path, settings.device), settings.padded_lstm)  # as the job
    rows = split_frame(pd.read_parquet(inputs["instances"]), "test")
    scores = importance_table(model, rows, settings)[["instance_id", *JW_RANKINGS]]  # the job's own table: not counted
    start = time.perf_counter()
    erasure_tables(model, rows, scores, erasure, seed=m["seed"], batch_size=settings.batch_size, progress=False)
    return len(rows), before, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="syn_sentiment")
    parser.add_argument("--model", default="lstm-tanh", help="{encoder}-{attention}")
    parser.add_argument("--seed", default=0, type=int)
    parser.add_argument("--workdir", default=".", type=Path, help="the workflow's working directory (holds results/)")
    parser.add_argument("--batch-size", default=32, type=int)
    parser.add_argument("--reference-instances", default=24, type=int)
    parser.add_argument("--permutations", default=100, type=int)
    parser.add_argument("--adversary-steps", default=100, type=int, help="steps for both adversary timings (default config: 500)")
    parser.add_argument("--threads", default=1, type=int)
    parser.add_argument("--erasure-cost", action="store_true", help="the erasure tests' cost against the analyses job")
    parser.add_argument("--configfile", default="config/config.yaml", help="with --erasure-cost: the run's config")
    parser.add_argument("--all-models", action="store_true", help="with --erasure-cost: every trained grid model")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    if args.erasure_cost:
        return erasure_cost(args)
    torch.manual_seed(0)
    encoder, attention = args.model.split("-")
    model_path = args.workdir / paths.model_files(args.dataset, encoder, attention, args.seed)["model"]
    if not model_path.exists():
        raise SystemExit(f"{model_path} not found; build it first: snakemake --cores 2 models")
    model = load_model(model_path)
    rows = split_frame(pd.read_parquet(args.workdir / paths.preprocessed_files(args.dataset)["instances"]), "test")
    subset = rows.iloc[np.linspace(0, len(rows) - 1, min(args.reference_instances, len(rows))).round().astype(int)]
    batches = sequential_batches(rows, args.batch_size)
    adversary = schema_adversary(args.adversary_steps)
    scale, ref_scale = 1000 / len(rows), 1000 / len(subset)
    print(
        f"{args.dataset} {args.model}: {len(rows)} test instances (mean length {rows['length'].mean():.1f}), "
        f"references on {len(subset)}; batch size {args.batch_size}; {torch.get_num_threads()} thread(s)"
    )

    with torch.no_grad():
        decode_pass = timed(lambda: [model.decode(model.encode(b), model.attend(model.encode(b), b), b) for b in batches])
        encoded = [(b, model(b)) for b in batches]
        decode_only = timed(lambda: [model.decode(o.encoded, o.attention, b) for b, o in encoded])

    generator = torch.Generator().manual_seed(0)
    analyses = {
        "gradient": (
            lambda: [gradient_importance(model, b) for b in batches],
            lambda: per_instance(lambda one: gradient_importance(model, one), subset),
        ),
        "leave-one-out": (lambda: [leave_one_out(model, b) for b in batches], lambda: loo_per_position(model, subset)),
        "integrated gradients (16 steps)": (
            lambda: [integrated_gradients(model, b, 16) for b in batches],
            lambda: per_instance(lambda one: integrated_gradients(model, one, 16), subset),
        ),
        f"permutation ({args.permutations})": (
            lambda: [permutation_output_changes(model, b, sample_permutations(b, args.permutations, generator)) for b in batches],
            lambda: permutation_per_instance(model, subset, args.permutations),
        ),
        f"adversary ({args.adversary_steps} steps, K=5)": (
            lambda: adversarial_attention(model, collate(rows), adversary, generator),
            lambda: per_instance(lambda one: adversarial_attention(model, one, adversary, generator), subset),
        ),
    }
    print(f"{'analysis':36s} {'batched s/1k':>12s} {'reference s/1k':>15s} {'speed-up':>9s}")
    seconds = {}
    for name, (batched, reference) in analyses.items():
        fast, slow = timed(batched) * scale, timed(reference) * ref_scale
        seconds[name] = fast
        print(f"{name:36s} {fast:12.3f} {slow:15.3f} {slow / fast:8.1f}x", flush=True)
    permutation = seconds[f"permutation ({args.permutations})"] / scale
    adversary_total = seconds[f"adversary ({args.adversary_steps} steps, K=5)"] / scale
    print(f"one encoder+decoder pass over the test set: {decode_pass:.4f}s; decoder alone: {decode_only:.4f}s")
    print(f"permutation: {permutation / (args.permutations * decode_only):.1f} decoder passes per permutation")
    print(
        f"adversary: {adversary_total / (args.adversary_steps * decode_only):.1f} decoder passes per step, "
        f"{adversary_total / (args.adversary_steps * adversary.candidates * decode_only):.1f} per candidate "
        f"(forward + backward, JSD and the K x K diversity term)"
    )


if __name__ == "__main__":
    main()
