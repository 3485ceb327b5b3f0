"""config/paper_quick.yaml (issue 20 §4): layered after config/paper.yaml it plans every kind of job the paper grid
has, on the same datasets, at one seed, one lambda and a sample of each model's test instances."""

import subprocess
import sys

import pytest
import yaml

from attnexp.config import load_config_file, validate_config
from tests.conftest import REPO, shared_data_dir
from tests.workflow.helpers import local_env
from tests.workflow.test_documented_commands import job_counts

pytestmark = pytest.mark.slow


def planned(*configfiles: str) -> dict[str, int]:
    """Rule -> job count of a dry run of the report target (every table, figure and the report); --forceall: as from an
    empty results/, whatever a run in this checkout has made."""
    command = [sys.executable, "-m", "snakemake", "-n", "--forceall", "report", "--configfile", *configfiles]
    result = subprocess.run(
        [*command, "--directory", str(REPO)], cwd=REPO, env=local_env(), capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return job_counts(result.stdout)


def test_the_quick_grid_is_the_paper_grid_at_reduced_scale(tmp_path):
    if shared_data_dir() is None:
        pytest.skip("the real datasets (../shared/data) are not available")
    quick = yaml.safe_load((REPO / "config/paper_quick.yaml").read_text())
    assert quick["seeds"] == [0] and quick["analyses"]["test_sample"]["n"] <= 200
    merged = validate_config(
        {**load_config_file(REPO / "config/paper.yaml"), **{k: v for k, v in quick.items() if k not in ("analyses", "wp")}}
    )
    assert {d: h["epochs"] for d, h in merged["hyperparameters"].items()} == dict.fromkeys(merged["datasets"], 1)
    paper, small = planned("config/paper.yaml"), planned("config/paper.yaml", "config/paper_quick.yaml")
    assert set(small) == set(paper)  # every kind of job
    assert small["train"] * 3 == paper["train"]  # the same datasets x encoders x attentions, one seed of three
    assert small["preprocess"] == paper["preprocess"] and small["analyze"] >= small["train"]
    wp_datasets = small["wp_seed_variance"]
    assert wp_datasets == paper["wp_seed_variance"] >= 3  # SST, IMDB, 20 News with the shared data
    assert small["wp_adversary"] == wp_datasets  # one lambda
    assert small["wp_train"] == wp_datasets * (2 + 1 + 4)  # base, uniform, one extra seed, four guided MLPs
