"""Predict the cost of every job of the paper grid (`config/paper.yaml`) by running the jobs' own functions on parts
of each dataset, compare it with the workflow's job logs, and write the cluster resources table.

    PYTHONPATH=src python benchmarks/paper_grid_cost.py [--datasets sst imdb] [--fraction 0.05]
        [--analysis-batches 8] [--cores 8 32] [--threads 1] [--configfile config/paper.yaml]
        [--predictions costs.csv | --from-predictions costs.csv] [--measured logs ...]
        [--write-resources workflow/resources.tsv]

Every measured job kind runs in a fresh child process (its peak RSS is the child's own `ru_maxrss`, as in a job):
- preprocess: the whole dataset, timed as is.
- train (per encoder), wp_train (the base BiLSTM, the costliest variant) and wp_adversary (per lambda, all
  `wp.adversary.max_epochs` epochs: patience may stop it earlier, so an upper bound): the job function itself on
  `--fraction` (at least 20 batches, at most 1/4) of the train and dev splits with the whole test split, three
  times (1 epoch on f, 2 epochs on f, 2 epochs on 2f) after an untimed first run whose extra time (first calls)
  goes into the fixed cost. That first run also trains on the split's longest batch, so the child's peak memory
  holds a job's peak (bAbI 3 (1k) BiLSTM: 1,293 MiB predicted without it, 1,939 with it, 1,988 measured).
  An epoch on fraction f takes E + f P (training and the dev evaluation): P scales
  with the data, E does not (SST BiLSTM: about 0.3 s of a 6.4 s epoch, which over f = 0.1 read as 1.4x the
  epoch). The runs' own second epochs (timings.json) on f and 2f give P and E; with
  wall(epochs, f) = F + f D + epochs (E + f P) the walls give the per-job cost that scales with the data D (W&P's
  stored predictions) and the fixed cost F (reading the data, building the model, scoring the test split,
  writing the run): job = F + D + epochs x (E + P). The epoch's cost once came from wall(2, f) - wall(1, f) over
  f, which counted E 1/f times and carried two walls' noise.
- analyze (per encoder) and wp_jw_adversary: the job function on `--analysis-batches` whole batches of the test
  split in its length-sorted order, one from the middle of each equal stretch of the batches (so the sample
  spans the length range as the job does), the erasure tests included when the config enables them; scaled by
  the number of batches after the fixed cost (loading the model and the data). A pass over the longest batch
  alone, first, puts its memory into the peak and keeps first calls out of the timing; the tables the job
  accumulates over the whole split are added to the peak.
Peak RSS reads 10-15% low against the jobs' logs (SST BiLSTM: 754 against 860 MiB training, 1041 against 1199
analysing; probably a job's many more batches fragmenting memory); the resources table's 1.5x headroom covers it.
Every job also pays its imports (torch and the libraries; preprocessing: pandas), timed in fresh processes and added.
Prints per job kind and dataset the predicted seconds and peak RSS, CPU-hours per stage and dataset for the whole
grid, its wall time on each of `--cores`, and the longest job. `--measured DIR...` reads the workflow's job logs
(`job usage: wall W s, cpu C s, max rss M MiB`, last line of each logs/<stage>/... file) and prints each job's
time and memory beside the prediction of its kind; `--write-resources PATH` merges both into the cluster resources
table (per kind, the max over its jobs; measured rows win over predicted ones; rows of other kinds are kept):
give it the logs of a full-scale run of the paper grid only, since a reduced run's (config/paper_quick.yaml, a
default grid) would shrink the paper grid's requests.
`--datasets` with no name measures nothing (only the logs, or `--from-predictions`). Run on a quiet machine.
`--whole-grid TABLE` costs every job of Snakemake's own DAG for `--configfile` (one or more, layered; built through
Snakemake's API, nothing runs) at the table's figures and prints, per core count, the bound max(longest job,
CPU-hours / cores) and the wall of that DAG scheduled as Snakemake's greedy scheduler would (`schedule_wall`: a job
starts once its inputs are done and its threads fit, ready jobs by the workflow's `priority`, then longer first),
and the critical path.
"""

import argparse
import dataclasses
import heapq
import importlib
import math
import multiprocessing
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import networkx
import pandas as pd
import yaml

from attnexp import paths
from attnexp.config import PACKAGED_SCHEMA, validate_config
from attnexp.datasets import get_dataset
from attnexp.datasets.acquire import missing_data
from attnexp.pipeline import policy
from attnexp.pipeline.resources import SYNTHETIC, Cost, ResourceTable, job_usages

REPO = Path(__file__).resolve().parents[1]
KEEP_MODEL = {"encoder", "hf_model"}  # wildcards whose value keeps a row of its own; others: the max over them
MIN_BATCHES = 20  # train batches per timed epoch at least (fewer: the differences between runs are noise)
JOB_IMPORTS = "torch, pandas, pyarrow.parquet, scipy.stats, sklearn.metrics"  # what the model jobs load
STAGES = ("preprocess", "train", "analyze", "wp_train", "wp_adversary", "wp_jw_adversary")


# --- child processes: one per measured job kind, so that each peak RSS is that job's alone ---


def _child(queue, function, args, threads):
    import snakemake.script  # noqa: F401 - a workflow script's process has it loaded too
    import torch

    # Everything a job imports, before any timing: the parent adds their cost once (`import_seconds`). A module the
    # job imports lazily (sklearn.metrics at the first dev evaluation) would otherwise also land in the first run's
    # extra time (`warm_up`) and be counted twice.
    for module in JOB_IMPORTS.split(", "):
        importlib.import_module(module)

    torch.set_num_threads(threads)
    result = function(*args)
    result["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(result)


def in_child(function, *args, threads: int = 1) -> dict:
    """`function(*args)` (a dict of seconds) in a fresh process, with that process's peak RSS (MiB) added."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(queue, function, args, threads))
    process.start()
    result = queue.get()
    process.join()
    if process.exitcode:
        raise RuntimeError(f"{function.__name__}{args[:3]} failed (exit {process.exitcode})")
    return result


def import_seconds(modules: str) -> float:
    """What a job pays before its work and a child here does not: importing `modules` (in a job's log time they
    load inside the job function); the fastest of three fresh processes, less the interpreter's start."""

    def seconds(code: str) -> float:
        return min(wall_timed(lambda: subprocess.run([sys.executable, "-c", code], check=True)) for _ in range(3))

    return max(seconds(f"import {modules}") - seconds("pass"), 0.0)


def files(pattern: dict, root: Path, **wildcards) -> dict:
    return {k: str(root / v.format(**wildcards)) for k, v in pattern.items()}


def wall_timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def timed(function) -> float:
    """CPU seconds of `function` in this process: a one-thread job's wall time on an idle core, and far less
    disturbed than wall time by other work on a shared machine (what the job logs' `cpu` is compared with)."""
    start = time.process_time()
    function()
    return time.process_time() - start


def measure_preprocess(config: dict, name: str, root: str) -> dict:
    from attnexp.data.preprocess import preprocess, write_preprocessed

    start = time.process_time()
    spec, prep = get_dataset(name), config["preprocessing"]
    raw = policy.raw_dir(spec, config["data"], REPO)
    instances, meta = preprocess(spec, raw, prep["vocab_fit_on"], prep["implicit_extremes"], config["data"]["user_files"])
    out = files(paths.preprocessed_files(), Path(root), dataset=name)
    write_preprocessed(instances, meta, out["instances"], out["meta"])
    return {"seconds": time.process_time() - start}


def measure_training(config: dict, kind: str, name: str, model: str, root: str, parts: dict) -> dict:
    """The three timed runs of one training job kind ("train", "wp_train", "wp_adversary") on the subsampled
    datasets `parts` (fraction -> preprocessed files)."""
    from attnexp.io import read_json
    from attnexp.pipeline.plan import Plan
    from attnexp.pipeline.settings import TrainSettings, WPRunSettings
    from attnexp.pipeline.train import run_train
    from attnexp.pipeline.wp import run_wp_adversary, run_wp_train

    plan = Plan.from_config(config, basedir=REPO)

    def settings(epochs: int):
        if kind == "train":
            s = TrainSettings.from_plan(plan, dataset=name, encoder=model, attention=config["attentions"][0], seed=0)
        else:
            seed = config["wp"]["base_seed"]
            if kind == "wp_train":
                s = WPRunSettings.from_plan(plan, dataset=name, seed=seed, variant="base")
            else:
                lam = config["wp"]["lambdas"].get(name, config["wp"]["lambdas"]["default"])[0]
                s = WPRunSettings.from_plan(plan, dataset=name, seed=seed, lam=lam)
                schedule = dataclasses.replace(s.wp.adversary, max_epochs=epochs)
                s = dataclasses.replace(s, wp=dataclasses.replace(s.wp, adversary=schedule))
        fit = dataclasses.replace(s.fit, epochs=epochs)
        return dataclasses.replace(s, fit=fit, hyperparameters={**s.hyperparameters, "epochs": epochs})

    def run(epochs: int, fraction: str) -> float:
        out = Path(root) / f"{kind}-{model}-{epochs}-{fraction}"
        inputs = parts[fraction]
        if kind == "train":
            outputs = files(paths.model_files(), out, dataset=name, encoder=model, attention="a", seed=0)
            job = run_train
        else:
            outputs = files(paths.wp_run_files(), out, dataset=name, variant="v", seed=0)
            if kind == "wp_adversary":
                inputs = {**inputs, **{f"base_{k}": v for k, v in parts["base"].items()}}
            job = run_wp_adversary if kind == "wp_adversary" else run_wp_train
        wall = timed(lambda: job(inputs=inputs, outputs=outputs, settings=settings(epochs)))
        return wall, read_json(outputs["timings"])["seconds_per_epoch"]  # the run's own epoch times

    warm, _ = run(1, "warm")  # the process's first run pays one-time costs (lazy imports, first calls) once: the job's
    (e1f, _), (e2f, on_f), (e2f2, on_2f) = run(1, "f"), run(2, "f"), run(2, "2f")
    # second epochs: a run's first epoch also pays its first calls
    walls = {"e1f": e1f, "e2f": e2f, "e2f2": e2f2, "epoch_f": on_f[1], "epoch_2f": on_2f[1]}
    return {**walls, "warm_up": max(warm - walls["e1f"], 0.0)}


def measure_analysis(config: dict, kind: str, name: str, model: str, root: str, sample: dict, longest: dict) -> dict:
    """One analysis job kind ("analyze", "wp_jw_adversary") on the sampled test batches, then on the longest batch."""
    import torch

    from attnexp.io import read_parquet
    from attnexp.models.checkpoint import load_model
    from attnexp.pipeline.jw import run_analyze
    from attnexp.pipeline.plan import Plan
    from attnexp.pipeline.settings import AnalyzeSettings, WPAnalysisSettings
    from attnexp.pipeline.wp import run_wp_jw_adversary

    plan = Plan.from_config(config, basedir=REPO)

    def run(inputs: dict, tag: str) -> tuple[float, dict]:
        out = Path(root) / f"{kind}-{model}-{tag}"
        if kind == "analyze":
            s = AnalyzeSettings.from_plan(plan, dataset=name, seed=0, encoder=model, attention=config["attentions"][0])
            outputs = files(
                {**paths.analysis_files(), **paths.erasure_files()}, out, dataset=name, encoder="e", attention="a", seed=0
            )
            return timed(lambda: run_analyze(inputs=inputs, outputs=outputs, settings=s)), outputs
        s = WPAnalysisSettings.from_plan(plan, dataset=name, seed=config["wp"]["base_seed"])
        outputs = {"table": str(out / "jw_adversary.parquet")}
        out.mkdir(parents=True, exist_ok=True)
        return timed(lambda: run_wp_jw_adversary(inputs=inputs, outputs=outputs, settings=s)), outputs

    run(longest, "longest")  # first: its memory enters the peak, and the first calls' one-time costs stay out
    fixed = timed(lambda: (load_model(sample["model"]), read_parquet(sample["instances"]), torch.manual_seed(0)))
    seconds, outputs = run(sample, "sample")
    table_bytes = sum(int(read_parquet(p).memory_usage(deep=True).sum()) for p in outputs.values() if str(p).endswith(".parquet"))
    return {"fixed": fixed, "sample": seconds, "table_bytes": table_bytes}


# --- the parent: data parts, scaling, the grid ---


def sampled_batches(n_rows: int, batch_size: int, count: int) -> tuple[list[int], int]:
    """Indices of `count` batches, one from the middle of each equal stretch of the split's batches; the total."""
    total = math.ceil(n_rows / batch_size)
    count = min(count, total)
    return sorted({int((j + 0.5) * total / count) for j in range(count)}), total


def write_part(instances: pd.DataFrame, meta_path: str, root: Path, tag: str) -> dict:
    from attnexp.data.preprocess import write_preprocessed
    from attnexp.io import read_json

    out = files(paths.preprocessed_files(), root / tag, dataset="d")
    write_preprocessed(instances.reset_index(drop=True), read_json(meta_path), out["instances"], out["meta"])
    return out


def cost_row(rule, dataset, model, jobs, seconds, rss, detail="") -> dict:
    return {
        "rule": rule,
        "dataset": dataset,
        "model": model,
        "jobs": jobs,
        "runtime_s": seconds,
        "mem_mib": rss,
        "detail": detail,
    }


def training_cost(walls: dict, fraction: float, epochs: int) -> tuple[float, str]:
    """F + D + epochs x (E + P) from the walls and the second epochs on f and 2f (see the module docstring)."""
    per_epoch = max(walls["epoch_2f"] - walls["epoch_f"], 0.0) / fraction  # P: what an epoch spends per data
    epoch_fixed = max(walls["epoch_f"] - fraction * per_epoch, 0.0)  # E: what it spends whatever the data
    data = max(walls["e2f2"] - walls["e2f"] - 2 * fraction * per_epoch, 0.0) / fraction
    fixed = max(walls["e1f"] - fraction * data - epoch_fixed - fraction * per_epoch, 0.0) + walls["warm_up"]
    epoch = epoch_fixed + per_epoch
    return fixed + data + epochs * epoch, f"{epoch:.1f} s/epoch x {epochs}, fixed {fixed:.1f} s, data {data:.1f} s"


def measure_dataset(name: str, config: dict, args: argparse.Namespace, root: Path) -> list[dict]:
    """Predicted cost rows (rule, dataset, model, jobs, runtime_s, mem_mib) of one dataset's jobs."""
    from attnexp.data.preprocess import split_frame
    from attnexp.io import read_parquet

    spec = get_dataset(name)
    hp = policy.hyperparameters(name, config["hyperparameters"])
    threads = args.threads
    result = in_child(measure_preprocess, config, name, str(root), threads=threads)
    rows = [cost_row("preprocess", name, "*", 1, result["seconds"], result["rss_mib"])]
    report("preprocess", rows)
    full = files(paths.preprocessed_files(), root, dataset=name)
    instances = read_parquet(full["instances"])
    sizes = {s: len(split_frame(instances, s)) for s in ("train", "dev", "test")}
    fraction = min(0.25, max(args.fraction, MIN_BATCHES * hp["batch_size"] / sizes["train"]))
    halves = {s: split_frame(instances, s).sample(frac=2 * fraction, random_state=0) for s in ("train", "dev")}
    test = split_frame(instances, "test")
    first = {s: h.iloc[: len(h) // 2] for s, h in halves.items()}
    train = split_frame(instances, "train")
    longest_train = train.loc[train["tokens"].map(len).nlargest(hp["batch_size"]).index]
    longest_train = longest_train[~longest_train.index.isin(first["train"].index)]
    parts = {
        "f": write_part(pd.concat([*first.values(), test]), full["meta"], root, "f"),
        "2f": write_part(pd.concat([*halves.values(), test]), full["meta"], root, "2f"),
        # the untimed first run: f plus the longest training batch, whose activations set a training job's peak
        "warm": write_part(pd.concat([first["train"], longest_train, first["dev"], test]), full["meta"], root, "warm"),
    }
    chosen, n_batches = sampled_batches(len(test), hp["batch_size"], args.analysis_batches)
    bs = hp["batch_size"]
    sample_rows = pd.concat([test.iloc[i * bs : (i + 1) * bs] for i in chosen])
    sample = write_part(sample_rows, full["meta"], root, "sample")
    longest = write_part(test.iloc[-bs:], full["meta"], root, "longest")
    scale = n_batches / len(chosen)
    print(f"{name}: sizes {sizes}, fraction {fraction} of train/dev, {len(chosen)} of {n_batches} test batches", flush=True)
    grid = len(config["attentions"]) * len(config["seeds"])

    def analysis_cost(kind: str, model: str, model_file: str, jobs: int) -> dict:
        inputs = {"model": model_file, **({"instances": sample["instances"]} if kind != "analyze" else sample)}
        result = in_child(measure_analysis, config, kind, name, model, str(root), inputs, {**inputs, **longest}, threads=threads)
        seconds = result["fixed"] + max(result["sample"] - result["fixed"], 0.0) * scale
        rss = result["rss_mib"] + result["table_bytes"] * (scale - 1) / 2**20
        detail = f"{result['sample']:.1f} s on {len(chosen)} of {n_batches} batches"
        return cost_row(kind, name, model, jobs, seconds, rss, detail)

    stages = set(args.stages)
    for encoder in (args.encoders or config["encoders"]) if stages & {"train", "analyze"} else ():
        start = len(rows)
        # the analyses need a trained model: the training child writes one
        walls = in_child(measure_training, config, "train", name, encoder, str(root), parts, threads=threads)
        seconds, detail = training_cost(walls, fraction, hp["epochs"])
        if "train" in stages:
            rows.append(cost_row("train", name, encoder, grid, seconds, walls["rss_mib"], detail))
        model_file = files(
            paths.model_files(), root / f"train-{encoder}-1-2f", dataset=name, encoder=encoder, attention="a", seed=0
        )
        if "analyze" in stages:
            rows.append(analysis_cost("analyze", encoder, model_file["model"], grid))
        report(encoder, rows[start:])

    wp = config["wp"]
    if name in wp["datasets"] and spec.task == "bc" and stages & {"wp_train", "wp_adversary", "wp_jw_adversary"}:
        start = len(rows)
        walls = in_child(measure_training, config, "wp_train", name, "base", str(root), parts, threads=threads)
        seconds, detail = training_cost(walls, fraction, hp["epochs"])
        runs = 2 + len(wp["seeds"]) + len(wp["guides"])  # base, uniform, the seeds, one MLP per guide
        if "wp_train" in stages:
            rows.append(cost_row("wp_train", name, "*", runs, seconds, walls["rss_mib"], detail))
        parts["base"] = files(paths.wp_run_files(), root / "wp_train-base-1-2f", dataset=name, variant="v", seed=0)
        if "wp_adversary" in stages:
            walls = in_child(measure_training, config, "wp_adversary", name, "*", str(root), parts, threads=threads)
            seconds, detail = training_cost(walls, fraction, wp["adversary"]["max_epochs"])
            lambdas = len(wp["lambdas"].get(name, wp["lambdas"]["default"]))
            rows.append(cost_row("wp_adversary", name, "*", lambdas, seconds, walls["rss_mib"], detail))
        if "wp_jw_adversary" in stages:
            rows.append(analysis_cost("wp_jw_adversary", "*", parts["base"]["model"], 1))
        report("W&P", rows[start:])
    for r in rows:
        r["runtime_s"] += args.import_s["preprocess" if r["rule"] == "preprocess" else "torch"]
    return [r for r in rows if r["rule"] in stages]


def report(label: str, rows: list[dict]) -> None:
    text = "; ".join(f"{r['rule']} {r['runtime_s']:.0f} s, {r['mem_mib']:.0f} MiB ({r['detail']})" for r in rows)
    print(f"  {label}: {text}", flush=True)


def grid_summary(costs: pd.DataFrame, cores: list[int]) -> None:
    costs = costs.assign(cpu_h=costs["jobs"] * costs["runtime_s"] / 3600)
    print("\nCPU-hours of the grid per stage and dataset (1 thread per job; tables, figures and A&Z are minutes)")
    print(costs.pivot_table(index="dataset", columns="rule", values="cpu_h", aggfunc="sum", margins=True).round(2).to_string())
    total, longest = costs["cpu_h"].sum(), costs.loc[costs["runtime_s"].idxmax()]
    where = f"{longest['rule']} {longest['dataset']} {longest['model']}"
    print(f"\ntotal {total:.2f} CPU-hours; longest job {longest['runtime_s'] / 3600:.2f} h ({where})")
    for n in cores:
        print(f"predicted wall time on {n} cores: {max(total / n, longest['runtime_s'] / 3600):.2f} h")


def measured_jobs(log_dirs: list[str]) -> pd.DataFrame:
    """One row per finished job of the logs: its rule, dataset (`synthetic` for generated data), model, log,
    wall and CPU seconds and peak RSS."""
    records = []
    for log_dir in log_dirs:
        for u in job_usages(log_dir):
            dataset = u.wildcards.get("dataset", "*")
            if dataset != "*" and get_dataset(dataset).synthetic is not None:
                dataset = SYNTHETIC
            model = next((u.wildcards[w] for w in KEEP_MODEL if w in u.wildcards), "*")
            records.append(
                {"rule": u.rule, "dataset": dataset, "model": model, "log": os.path.relpath(u.log, log_dir)}
                | {"wall_s": u.wall_s, "cpu_s": u.cpu_s, "rss_mib": u.rss_mib}
            )
    return pd.DataFrame(records, columns=["rule", "dataset", "model", "log", "wall_s", "cpu_s", "rss_mib"])


def measured_costs(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per rule x dataset x model: the max wall, CPU and RSS over its jobs, and how many."""
    table = jobs.groupby(["rule", "dataset", "model"], as_index=False)
    return table.agg(jobs=("wall_s", "size"), wall_s=("wall_s", "max"), cpu_s=("cpu_s", "max"), rss_mib=("rss_mib", "max"))


def compare(predicted: pd.DataFrame, jobs: pd.DataFrame) -> None:
    """Each measured job beside the prediction of its kind; ratio = predicted / measured."""
    if predicted.empty:
        return
    both = jobs.merge(predicted.drop(columns="jobs"), on=["rule", "dataset", "model"])
    if both.empty:
        print("\nno measured job matches a predicted one")
        return
    both["time_ratio"] = both["runtime_s"] / both["cpu_s"]
    both["mem_ratio"] = both["mem_mib"] / both["rss_mib"]
    both["within_25%"] = (both["time_ratio"].sub(1).abs() <= 0.25) & (both["mem_ratio"].sub(1).abs() <= 0.25)
    columns = ["rule", "dataset", "model", "log", "runtime_s", "cpu_s", "wall_s", "time_ratio", "mem_mib", "rss_mib"]
    columns.append("mem_ratio")
    print("\npredicted against measured, per job (ratio = predicted / measured; time: CPU seconds, a job's wall when idle)")
    print(both[[*columns, "within_25%"]].round(2).to_string(index=False))
    print(f"{int(both['within_25%'].sum())} of {len(both)} jobs within 25% in time and memory")


def provenance() -> str:
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    cpu = (
        next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor(),
        )
        if Path("/proc/cpuinfo").exists()
        else platform.processor()
    )
    return f"commit {commit or '?'}, {cpu}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d')}"


def calibration(predicted: pd.DataFrame, measured: pd.DataFrame) -> pd.DataFrame:
    """Per rule, the largest measured / predicted ratio of time and of memory over the jobs measured (at least 1):
    the predictions of a kind of job that has under-predicted a measured job are raised by as much before they
    size requests (the analyses' peak RSS grows over a whole test split more than on the sampled batches)."""
    both = measured.merge(predicted, on=["rule", "dataset", "model"])
    ratios = pd.DataFrame(
        {"rule": both["rule"], "time": both["cpu_s"] / both["runtime_s"], "memory": both["rss_mib"] / both["mem_mib"]}
    )
    factors = ratios.groupby("rule")[["time", "memory"]].max().clip(lower=1.0)
    return factors.reindex(sorted(set(predicted["rule"]) | set(factors.index)), fill_value=1.0)


def calibrated(factors: pd.Series) -> str:
    raised = [f"{name} x{value:.2f}" for name, value in factors.items() if value > 1.0]
    return f" (raised by the worst measured under-prediction of its kind: {', '.join(raised)})" if raised else ""


def write_resources(path: Path, predicted: pd.DataFrame, measured: pd.DataFrame, log_dirs: list[str]) -> None:
    where = provenance()
    read = f"read {time.strftime('%Y-%m-%d')} at {where.split(',')[0]}"
    new = [
        Cost(
            r.rule,
            r.dataset,
            r.model,
            r.cpu_s,
            r.rss_mib,
            "measured",
            f"max of {r.jobs} job logs in {' '.join(log_dirs)} ({read})",
        )
        for r in measured.itertuples()
    ]
    factors = calibration(predicted, measured)
    new += [
        Cost(
            r.rule,
            r.dataset,
            r.model,
            r.runtime_s * factors.at[r.rule, "time"],
            r.mem_mib * factors.at[r.rule, "memory"],
            "predicted",
            f"benchmarks/paper_grid_cost.py{calibrated(factors.loc[r.rule])}; {where}",
        )
        for r in predicted.itertuples()
    ]
    table = ResourceTable.read(path) if path.exists() else ResourceTable([])
    merged = table.merged(new)
    merged.write(path)
    counts = f"{len(measured)} measured, {len(predicted)} predicted"
    print(f"\nwrote {path}: {len(new)} rows from this run ({counts}), {len(merged.rows)} in all")


# --- the wall time on N cores: the grid's real DAG, scheduled as Snakemake does ---


@dataclasses.dataclass(frozen=True)
class GridJob:
    """One job of the DAG: its name, CPU seconds, threads and Snakemake priority (higher starts first)."""

    name: str
    seconds: float
    threads: int = 1
    priority: float = 0.0
    rule: str = ""
    dataset: str = "*"
    source: str = ""


def schedule_wall(jobs: dict[str, GridJob], edges: list[tuple[str, str]], cores: int) -> float:
    """Seconds until the last job ends when `jobs` (name -> job) run on `cores` as Snakemake's greedy scheduler runs
    them: a job is ready once every job it depends on (an edge (before, after)) has ended; whenever cores free up, the
    ready jobs are taken by priority, then longer cost first, each started if its threads (capped at `cores`) fit in
    the free cores (Snakemake breaks ties among equal priorities otherwise). Every job takes its `seconds` whatever
    else runs (no slowdown from sharing the machine)."""
    waiting = {name: 0 for name in jobs}
    followers: dict[str, list[str]] = {name: [] for name in jobs}
    for before, after in edges:
        waiting[after] += 1
        followers[before].append(after)
    ready = [name for name, count in waiting.items() if count == 0]
    running: list[tuple[float, str]] = []  # (end, name), a heap
    now, free = 0.0, cores
    while ready or running:
        ready.sort(key=lambda name: (-jobs[name].priority, -jobs[name].seconds, name))
        for name in list(ready):
            threads = min(jobs[name].threads, cores)
            if threads <= free:
                free -= threads
                ready.remove(name)
                heapq.heappush(running, (now + jobs[name].seconds, name))
        now, name = heapq.heappop(running)
        ended = [name]
        while running and running[0][0] <= now:
            ended.append(heapq.heappop(running)[1])
        for name in ended:
            free += min(jobs[name].threads, cores)
            for after in followers[name]:
                waiting[after] -= 1
                if waiting[after] == 0:
                    ready.append(after)
    return now


def critical_path(jobs: dict[str, GridJob], edges: list[tuple[str, str]]) -> tuple[float, list[str]]:
    """The longest chain of the DAG in seconds (no number of cores ends the grid sooner) and its jobs, in order."""
    graph = networkx.DiGraph(edges)
    graph.add_nodes_from(jobs)
    longest: dict[str, tuple[float, list[str]]] = {}
    for name in networkx.topological_sort(graph):
        before = max((longest[p] for p in graph.predecessors(name)), default=(0.0, []), key=lambda chain: chain[0])
        longest[name] = (before[0] + jobs[name].seconds, [*before[1], name])
    return max(longest.values(), default=(0.0, []), key=lambda chain: chain[0])


def grid_dag(configfiles: list[str], table: ResourceTable, cores: int) -> tuple[dict[str, GridJob], list[tuple[str, str]]]:
    """Every job of `snakemake --forceall` for `configfiles` (layered over config/config.yaml) from Snakemake's own
    DAG (its API, no job run), each at its `table` cost, with the threads and priority Snakemake gives it on `cores`;
    and the DAG's edges. Jobs without a log (targets such as `all`) cost nothing."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings(dryrun=True, quiet={Quietness.ALL}, enable_file_logging=False)) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=cores),
            config_settings=ConfigSettings(configfiles=[Path(f).resolve() for f in configfiles]),
            snakefile=REPO / "Snakefile",
            workdir=REPO,
        )
        workflow = workflow_api.dag(DAGSettings(forceall=True)).workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
        workflow._build_dag()  # what `snakemake -n --dag` does, without printing
        dag = workflow.dag
        names = {job: f"{job.rule.name}{dict(job.wildcards_dict)}" for job in dag.jobs}
        jobs, edges = {}, []
        for job, name in names.items():
            wildcards = dict(job.wildcards_dict)
            cost = table.job_cost(table.rule_named(job.rule.name), wildcards) if job.log else None
            jobs[name] = GridJob(
                name,
                cost.runtime_s if cost else 0.0,
                job.threads,
                job.rule.expand_priority(job.wildcards_dict, job.input, job.attempt),
                job.rule.name,
                wildcards.get("dataset", "*"),
                cost.source if cost else "",
            )
            edges += [(names[before], name) for before in dag.dependencies[job]]
    return jobs, edges


def whole_grid(configfiles: list[str], table_path: Path, cores: list[int]) -> None:
    """CPU-hours of every job of the config's DAG at its workflow/resources.tsv figure (measured, predicted or
    estimated: the table's source column says which), per stage and dataset; the longest job and the critical path;
    on each of `cores`, the bound max(longest job, CPU-hours / cores) and the DAG scheduled as Snakemake would."""
    table = ResourceTable.read(table_path)
    jobs, edges = grid_dag(configfiles, table, max(cores))  # schedule_wall caps threads at fewer cores
    costed = pd.DataFrame([dataclasses.asdict(j) for j in jobs.values() if j.source])
    hours = costed.pivot_table(index="dataset", columns="rule", values="seconds", aggfunc="sum", margins=True, margins_name="All")
    heavy = [c for c in STAGES if c in hours]
    print(f"\nthe whole grid of {' '.join(configfiles)}: {len(costed)} jobs at their {table_path.name} figures, CPU-hours")
    print((hours[[*heavy, "All"]] / 3600).round(2).fillna(0).to_string())
    by_source = (costed.groupby("source")["seconds"].sum() / 3600).round(2).to_dict()
    total, longest = costed["seconds"].sum() / 3600, costed.loc[costed["seconds"].idxmax()]
    print(f"total {total:.2f} CPU-hours ({', '.join(f'{k} {v}' for k, v in by_source.items())})")
    print(f"longest job: {longest['rule']} {longest['dataset']} {longest['seconds'] / 3600:.2f} h")
    path_s, chain = critical_path(jobs, edges)
    print(f"critical path: {path_s / 3600:.2f} h ({' -> '.join(chain)})")
    for n in cores:
        bound = max(total / n, longest["seconds"] / 3600)
        scheduled = schedule_wall(jobs, edges, n) / 3600
        print(f"wall time on {n} cores: at least {bound:.2f} h; the DAG scheduled: {scheduled:.2f} h")


def layered(configfiles: list[str]) -> dict:
    """The config files merged in order, a later one's mappings updating an earlier one's (as `--configfile` does)."""

    def merge(base: dict, update: dict) -> dict:
        return {
            **base,
            **{k: merge(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v for k, v in update.items()},
        }

    config: dict = {}
    for path in configfiles:
        config = merge(config, yaml.safe_load(Path(path).read_text()) or {})
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--configfile", nargs="+", default=[str(REPO / "config" / "paper.yaml")], help="layered in order, as Snakemake's"
    )
    parser.add_argument("--raw-dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument(
        "--datasets", nargs="*", help="default: every dataset of the config with local data; none: only --measured"
    )
    parser.add_argument("--fraction", type=float, default=0.05, help="fraction f of the train and dev splits per timed training")
    parser.add_argument("--analysis-batches", type=int, default=8, help="test batches timed per analysis job")
    parser.add_argument("--cores", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES), help="job kinds to measure (default: all)")
    parser.add_argument("--encoders", nargs="+", help="default: the config's encoders")
    parser.add_argument("--predictions", help="write the predicted costs to this CSV")
    parser.add_argument("--from-predictions", help="read predicted costs from this CSV instead of measuring")
    parser.add_argument(
        "--measured", nargs="+", default=[], metavar="LOGDIR", help="workflow log folders (logs/) to compare with"
    )
    parser.add_argument(
        "--whole-grid",
        type=Path,
        metavar="TABLE",
        help="print the CPU-hours of every job of --configfile's dry run at this resources table's figures",
    )
    parser.add_argument(
        "--write-resources", type=Path, metavar="PATH", help="merge into this resources table (workflow/resources.tsv)"
    )
    args = parser.parse_args()
    missing = [d for d in args.measured if not Path(d).is_dir()]
    if missing:
        parser.error(f"--measured: no such folder: {', '.join(missing)}")
    config = layered(args.configfile)
    config["data"]["raw_data_dir"] = args.raw_dir
    config = validate_config(config, PACKAGED_SCHEMA)

    if args.from_predictions:
        predicted = pd.read_csv(args.from_predictions)
    else:
        names = config["datasets"] if args.datasets is None else args.datasets
        rows = []
        args.import_s = {"preprocess": import_seconds("pandas, pyarrow.parquet"), "torch": import_seconds(JOB_IMPORTS)}
        print(f"a job's imports: {args.import_s['torch']:.1f} s, preprocessing's {args.import_s['preprocess']:.1f} s", flush=True)
        with tempfile.TemporaryDirectory(prefix="paper-grid-cost-") as tmp:
            for name in names:
                spec = get_dataset(name)
                problem = missing_data(spec, policy.raw_dir(spec, config["data"], REPO), config["data"]["user_files"])
                if problem:
                    print(f"{name}: skipped ({problem.splitlines()[0]})", flush=True)
                    continue
                rows += measure_dataset(name, config, args, Path(tmp) / name)
        predicted = pd.DataFrame(rows, columns=["rule", "dataset", "model", "jobs", "runtime_s", "mem_mib", "detail"])
        if args.predictions:
            predicted.to_csv(args.predictions, index=False)
    if not predicted.empty:
        print("\npredicted cost per job (1 thread)")
        print(predicted.round(1).to_string(index=False))
        grid_summary(predicted, args.cores)
    jobs = measured_jobs(args.measured)
    measured = measured_costs(jobs)
    if args.measured:
        print(f"\nmeasured: {len(jobs)} finished jobs in {', '.join(args.measured)}")
        compare(predicted, jobs)
    if args.write_resources:
        write_resources(args.write_resources, predicted, measured, args.measured)
    if args.whole_grid:
        whole_grid(args.configfile, args.whole_grid, args.cores)


if __name__ == "__main__":
    main()
