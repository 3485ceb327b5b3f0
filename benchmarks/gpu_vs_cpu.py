"""One BiLSTM training epoch and its J&W analyses on the GPU and on the same machine's CPU, through the jobs' own
functions (`run_train`, `run_analyze`) at `config/paper.yaml`'s settings.

    PYTHONPATH=src python benchmarks/gpu_vs_cpu.py [--datasets sst imdb] [--devices cuda cpu] [--cpu-threads 16]
        [--cpu-train-fraction 0.25] [--test-sample 500] [--directory .] [--out timings.csv]

Reads each dataset's preprocessed files (`snakemake --cores 2 preprocessed --configfile config/paper.yaml` writes
them). Per dataset and device: `run_train` for one epoch of BiLSTM-tanh, seed 0 (the epoch's seconds as the training
log records them: training and the dev evaluation), then `run_analyze` on that model over a seeded sample of
`--test-sample` test instances (`analyses.test_sample`, erasure tests included), timed whole. The CPU trains on
`--cpu-train-fraction` of the train and dev splits (an IMDB epoch is minutes there); the `full` columns scale the
epoch by train tokens and the analyses by test instances, so both devices are compared on whole-split estimates. An
untimed warm-up run on each device first keeps CUDA's start-up and first calls out of the figures. A measurement, not
a test; prints the machine, a table and, with `--out`, a CSV.
"""

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
import yaml

from attnexp import paths
from attnexp.config import PACKAGED_SCHEMA, validate_config
from attnexp.data.preprocess import read_preprocessed, split_frame, write_preprocessed
from attnexp.io import read_json
from attnexp.pipeline.jw import run_analyze
from attnexp.pipeline.plan import Plan
from attnexp.pipeline.settings import AnalyzeSettings, TrainSettings
from attnexp.pipeline.train import run_train

REPO = Path(__file__).resolve().parents[1]


def files(pattern: dict, root: Path, **wildcards) -> dict:
    return {key: str(root / value.format(**wildcards)) for key, value in pattern.items()}


def part(instances: pd.DataFrame, meta: dict, fraction: float, root: Path) -> tuple[dict, float]:
    """Preprocessed files holding `fraction` of the train and dev splits (seeded) and the whole test split; the
    share of the train split's tokens kept."""
    train = split_frame(instances, "train")
    kept = {s: split_frame(instances, s).sample(frac=fraction, random_state=0) for s in ("train", "dev")}
    out = files(paths.preprocessed_files(), root, dataset="d")
    rows = pd.concat([*kept.values(), split_frame(instances, "test")]).reset_index(drop=True)
    write_preprocessed(rows, meta, out["instances"], out["meta"])
    share = kept["train"]["tokens"].map(len).sum() / train["tokens"].map(len).sum()
    return out, float(share)


def config_for(configfile: Path, dataset: str, device: str, test_sample: int) -> dict:
    config = yaml.safe_load(configfile.read_text())
    config.update(datasets=[dataset], encoders=["lstm"], attentions=["tanh"], seeds=[0], device=device)
    config.setdefault("hyperparameters", {}).setdefault(dataset, {})["epochs"] = 1
    config.setdefault("analyses", {})["test_sample"] = {"n": test_sample or None, "seed": 0}
    return validate_config(config, PACKAGED_SCHEMA)


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_pair(config: dict, dataset: str, inputs: dict, root: Path, threads: int) -> tuple[float, float, float]:
    """Train one epoch and analyse: (epoch seconds from the training log, training job seconds, analyses seconds)."""
    device = config["device"]
    model = files(paths.model_files(), root, dataset=dataset, encoder="lstm", attention="tanh", seed=0)
    plan = Plan.from_config(config)
    train = TrainSettings.from_plan(plan, dataset=dataset, encoder="lstm", attention="tanh", seed=0)
    start = time.perf_counter()
    run_train(inputs=inputs, outputs=model, settings=train, threads=threads)
    synchronize(device)
    train_s = time.perf_counter() - start
    epoch_s = float(read_json(model["timings"])["seconds_per_epoch"][0])
    analyze = AnalyzeSettings.from_plan(plan, dataset=dataset, seed=0, encoder="lstm", attention="tanh")
    outputs = files(
        {**paths.analysis_files(), **paths.erasure_files()}, root, dataset=dataset, encoder="e", attention="a", seed=0
    )
    start = time.perf_counter()
    run_analyze(inputs={**inputs, "model": model["model"]}, outputs=outputs, settings=analyze, threads=threads)
    synchronize(device)
    return epoch_s, train_s, time.perf_counter() - start


def machine() -> str:
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, {gpu}; torch {torch.__version__}; load {load}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", type=Path, default=REPO / "config" / "paper.yaml")
    parser.add_argument("--directory", type=Path, default=REPO, help="the workflow's directory (its results/preprocessed/)")
    parser.add_argument("--datasets", nargs="+", default=["sst", "imdb"])
    parser.add_argument("--devices", nargs="+", default=["cuda", "cpu"])
    parser.add_argument("--cpu-threads", type=int, nargs="+", default=[os.cpu_count()])
    parser.add_argument("--cpu-train-fraction", type=float, default=0.25)
    parser.add_argument("--test-sample", type=int, default=500, help="test instances analysed; 0: all")
    parser.add_argument("--out", type=Path, help="write the table to this CSV")
    args = parser.parse_args()
    if "cuda" in args.devices and not torch.cuda.is_available():
        parser.error("--devices cuda: torch sees no GPU here")
    print(machine(), flush=True)

    rows = []
    with tempfile.TemporaryDirectory(prefix="gpu-vs-cpu-") as tmp:
        for dataset in args.datasets:
            whole = files(paths.preprocessed_files(), args.directory, dataset=dataset)
            instances, meta = read_preprocessed(whole["instances"], whole["meta"])
            n_test = len(split_frame(instances, "test"))
            analysed = min(args.test_sample or n_test, n_test)
            n_train = len(split_frame(instances, "train"))
            warm_inputs, _ = part(instances, meta, 0.02, Path(tmp) / f"{dataset}-warm")
            for device in args.devices:
                fraction = args.cpu_train_fraction if device == "cpu" else 1.0
                inputs, share = (whole, 1.0) if fraction >= 1 else part(instances, meta, fraction, Path(tmp) / f"{dataset}-part")
                config = config_for(args.configfile, dataset, device, args.test_sample)
                for threads in args.cpu_threads if device == "cpu" else [1]:
                    run_pair(config_for(args.configfile, dataset, device, 20), dataset, warm_inputs, Path(tmp) / "warm", threads)
                    if device.startswith("cuda"):
                        torch.cuda.reset_peak_memory_stats()
                    epoch_s, train_s, analyze_s = run_pair(config, dataset, inputs, Path(tmp) / f"{dataset}-{device}", threads)
                    peak = torch.cuda.max_memory_allocated() / 2**20 if device.startswith("cuda") else float("nan")
                    rows.append(
                        {
                            "dataset": dataset,
                            "device": device,
                            "threads": threads,
                            "train_n": f"{round(n_train * fraction)}/{n_train}",
                            "epoch_s": epoch_s,
                            "epoch_s_full": epoch_s / share,
                            "train_job_s": train_s,
                            "test_n": f"{analysed}/{n_test}",
                            "analyze_s": analyze_s,
                            "analyze_s_full": analyze_s * n_test / analysed,
                            "gpu_peak_mib": peak,
                        }
                    )
                    print(pd.DataFrame(rows[-1:]).round(2).to_string(index=False), flush=True)
    table = pd.DataFrame(rows)
    print("\n" + table.round(2).to_string(index=False))
    for dataset in args.datasets:
        gpu = table[(table["dataset"] == dataset) & (table["device"] != "cpu")]
        cpu = table[(table["dataset"] == dataset) & (table["device"] == "cpu")]
        for _, c in cpu.iterrows():
            for _, g in gpu.iterrows():
                epoch, analyses = c["epoch_s_full"] / g["epoch_s_full"], c["analyze_s_full"] / g["analyze_s_full"]
                against = f"{g['device']} against the CPU at {c['threads']} threads"
                print(f"{dataset}: {against}: epoch {epoch:.1f}x, analyses {analyses:.1f}x faster")
    print(machine())
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
