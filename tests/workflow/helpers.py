"""Fixture factories for tests that run the workflow: a tiny config and a Snakemake runner in a work directory."""

import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from tests.conftest import REPO


def tiny_config(**overrides) -> dict:
    """The embedded default shrunk to seconds; later stages' sections stay as the default sets them."""
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    config.update(datasets=["syn_sentiment", "syn_nli", "syn_babi1"], encoders=["average", "cnn"], attentions=["tanh"], seeds=[0])
    synthetic = config["synthetic"]
    synthetic["sentiment"]["sizes"] = {"train": 120, "dev": 30, "test": 30}
    synthetic["nli"]["sizes"] = {"train": 90, "dev": 30, "test": 30}
    synthetic["babi"].update(n_train=60, n_test=20)
    config["hyperparameters"] = {d: {"epochs": 2, "embedding_dim": 16, "hidden_size": 8} for d in config["datasets"]}
    config["az"].update(
        datasets=["syn_agreement"],
        agreement={"sizes": {"train": 60, "dev": 20, "test": 20}},
        model={"n_layers": 2, "n_heads": 2, "width": 16},
        train={"epochs": 2},
    )
    config["wp"].update(seeds=[50], lambdas={"default": [0.1, 1]}, adversary={"max_epochs": 2, "patience": 1})
    config.update(overrides)
    return config


@functools.cache
def _failing_scontrol() -> str:
    """A folder holding an `scontrol` that fails at once. Snakemake's SLURM executor plugin runs `scontrol show
    config` (10 s timeout) whenever Snakemake starts where SLURM's client tools are installed (CI installs them);
    with no controller running that costs 10 s per invocation, and local runs need no cluster."""
    folder = Path(tempfile.mkdtemp(prefix="attnexp-no-slurm-"))
    (folder / "scontrol").write_text("#!/bin/sh\nexit 1\n")
    (folder / "scontrol").chmod(0o755)
    return str(folder)


def local_env() -> dict[str, str]:
    """The environment of a local (non-SLURM) workflow run: this checkout's src/ first, no SLURM probing."""
    path = os.pathsep.join([_failing_scontrol(), os.environ.get("PATH", "")])
    python_path = os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PATH": path, "PYTHONPATH": python_path}


def snakemake(workdir: Path, *args: str, config: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run the repository's workflow in `workdir` (writing `config` to its config/config.yaml first); jobs import
    this checkout's src/, whichever copy of attnexp the environment has installed."""
    if config is not None:
        (workdir / "config").mkdir(exist_ok=True)
        (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), "--cores", "2", *args]
    return subprocess.run(command, cwd=workdir, env=local_env(), capture_output=True, text=True, timeout=timeout)
