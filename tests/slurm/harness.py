"""Run the workflow's tiny grid locally and on the single-node SLURM cluster of slurm-up.sh, and compare.

Shared by tests/workflow/test_slurm.py and benchmarks/slurm_vs_local.py.
"""

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import torch
import yaml

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
UNAVAILABLE = 3  # slurm-up.sh: nothing started, SLURM cannot run here
TIMING_WORDS = ("second", "time", "duration", "elapsed")


class SlurmUnavailable(RuntimeError):
    """SLURM could not be installed or started on this machine (the message says why)."""


@contextlib.contextmanager
def slurm_cluster(piddir: Path) -> Iterator[float]:
    """Start munged, slurmctld and slurmd (slurm-up.sh); yield the bring-up seconds; stop them by PID."""
    env = {**os.environ, "PIDDIR": str(piddir)}
    start = time.perf_counter()
    try:
        up = subprocess.run(["bash", str(HERE / "slurm-up.sh")], env=env, capture_output=True, text=True, timeout=600)
        seconds = time.perf_counter() - start
        print(up.stdout, up.stderr, sep="\n")
        if up.returncode != 0:
            raise SlurmUnavailable(f"slurm-up.sh exited {up.returncode}: {(up.stderr or up.stdout).strip()[-2000:]}")
        yield seconds
    finally:
        down = subprocess.run(["bash", str(HERE / "slurm-down.sh")], env=env, capture_output=True, text=True, timeout=120)
        print(down.stdout, down.stderr, sep="\n")


def tiny_config() -> dict:
    """The repository's config shrunk to one dataset, one model and a few seconds of training."""
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    config.update(datasets=["syn_sentiment"], encoders=["average"], attentions=["tanh"], seeds=[0])
    config["synthetic"]["sentiment"].update(sizes={"train": 120, "dev": 40, "test": 40}, vocab_size=60)
    config["hyperparameters"] = {"syn_sentiment": {"epochs": 2, "batch_size": 16, "embedding_dim": 8, "hidden_size": 8}}
    config["wp"]["datasets"] = []  # the W&P and Transformer stages have their own tests; keep this run to a few jobs
    config["az"]["datasets"] = []
    return config


def make_workdir(path: Path, config: dict) -> Path:
    (path / "config").mkdir(parents=True, exist_ok=True)
    (path / "config/config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def snakemake(
    workdir: Path, *args: str, env: dict | None = None, timeout_s: int = 600
) -> tuple[subprocess.CompletedProcess, float]:
    """Run the repository's workflow in `workdir` under `timeout -s INT` (SIGINT cancels SLURM jobs; TERM hangs)."""
    env = {**os.environ, **(env or {})}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "src"), env.get("PYTHONPATH", "")) if p)
    command = [
        "timeout",
        "-s",
        "INT",
        "-k",
        "60",
        str(timeout_s),
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        *args,
    ]
    start = time.perf_counter()
    result = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout_s + 120)
    return result, time.perf_counter() - start


def run_local(workdir: Path, *targets: str) -> tuple[subprocess.CompletedProcess, float]:
    return snakemake(workdir, "--cores", "2", "--workflow-profile", str(REPO / "profiles/default"), *targets)


def run_slurm(workdir: Path, *targets: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    return snakemake(workdir, "--workflow-profile", str(REPO / "profiles/slurm-ci"), *targets, env=env)


def result_files(workdir: Path) -> list[Path]:
    return sorted(p.relative_to(workdir) for p in (workdir / "results").rglob("*") if p.is_file())


def _drop_timings(value):
    if isinstance(value, dict):
        return {k: _drop_timings(v) for k, v in value.items() if not any(w in k.lower() for w in TIMING_WORDS)}
    if isinstance(value, list):
        return [_drop_timings(v) for v in value]
    return value


def _timing_columns(frame: pd.DataFrame) -> list:
    return [c for c in frame.columns if any(w in str(c).lower() for w in TIMING_WORDS)]


def assert_same_output(expected: Path, actual: Path) -> None:
    """Equal content for the deterministic formats (wall-clock fields aside); other files only need to exist."""
    assert actual.is_file(), f"missing {actual}"
    suffix = expected.suffix
    if suffix == ".parquet":
        left, right = pd.read_parquet(actual), pd.read_parquet(expected)
        pd.testing.assert_frame_equal(left.drop(columns=_timing_columns(left)), right.drop(columns=_timing_columns(right)))
    elif suffix == ".csv":
        left, right = pd.read_csv(actual), pd.read_csv(expected)
        pd.testing.assert_frame_equal(left.drop(columns=_timing_columns(left)), right.drop(columns=_timing_columns(right)))
    elif suffix == ".json":
        assert _drop_timings(json.loads(actual.read_text())) == _drop_timings(json.loads(expected.read_text())), actual
    elif suffix in (".yaml", ".yml"):
        assert _drop_timings(yaml.safe_load(actual.read_text())) == _drop_timings(yaml.safe_load(expected.read_text())), actual
    elif suffix == ".pt":
        left = torch.load(actual, map_location="cpu", weights_only=True)["state_dict"]
        right = torch.load(expected, map_location="cpu", weights_only=True)["state_dict"]
        assert left.keys() == right.keys(), actual
        for name in left:
            torch.testing.assert_close(left[name], right[name], rtol=0, atol=0, msg=f"{actual}: {name}")
