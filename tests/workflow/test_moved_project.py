"""Results that travel (issue 23 item 9): raw-data inputs and job parameters hold relative, normalised paths, so a
project moved or copied elsewhere, results/ and .snakemake/ with it and its raw data beside it, reruns nothing."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.workflow.helpers import local_env

pytestmark = pytest.mark.slow

PROJECT_FILES = ("Snakefile", "workflow", "profiles", "src")


def run(project: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "snakemake", "--cores", "2", *args]
    return subprocess.run(command, cwd=project, env=local_env(), capture_output=True, text=True, timeout=600)


def test_a_moved_project_reruns_nothing(tmp_path, shared_data):
    here = tmp_path / "here"
    project = here / "project"
    project.mkdir(parents=True)
    for name in PROJECT_FILES:
        source = REPO / name
        copy = shutil.copytree if source.is_dir() else shutil.copy2
        copy(source, project / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if source.is_dir() else {}))
    shutil.copytree(shared_data / "sst", here / "data" / "sst", ignore=shutil.ignore_patterns("*.csv"))
    if (shared_data / "SHA256SUMS").is_file():
        shutil.copy2(shared_data / "SHA256SUMS", here / "data" / "SHA256SUMS")  # SST's own lines only are checked
    config = {
        "datasets": ["sst"],
        "encoders": ["average"],
        "attentions": ["tanh"],
        "seeds": [0],
        "hyperparameters": {"sst": {"epochs": 1, "embedding_dim": 8, "hidden_size": 4, "batch_size": 256}},
        "data": {"raw_data_dir": "./../data/", "on_missing": "fail"},  # relative, unnormalised on purpose
        "az": {"datasets": []},
        "wp": {"datasets": []},
    }
    (project / "config").mkdir()
    (project / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    done = run(project, "models")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (project / "results/models/sst/average-tanh/seed0/metrics.json").is_file()

    moved = tmp_path / "elsewhere" / "deeper"
    shutil.copytree(here, moved, symlinks=True)  # copy2: modification times kept, as `cp -a` keeps them
    dry = run(moved / "project", "-n", "models")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout[-3000:] + dry.stderr[-3000:]
