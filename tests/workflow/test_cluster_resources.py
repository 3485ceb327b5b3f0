"""Issue 20 §3: every job of the paper grid asks a cluster for at least 1.5x its predicted or measured time and 1.3x
its peak memory from workflow/resources.tsv, per dataset and kind of job, and more on each retry."""

import subprocess
import sys
from functools import cache

import pytest

from attnexp.pipeline.resources import MB_PER_MIB, ResourceTable, dry_run_jobs
from tests.conftest import REPO, shared_data_dir
from tests.workflow.helpers import local_env

HEAVY = {"preprocess", "train", "analyze", "wp_train", "wp_adversary", "wp_jw_adversary"}  # per-dataset rows
TABLE = ResourceTable.read(REPO / "workflow/resources.tsv")
PAPER = ["--configfile", str(REPO / "config/paper.yaml")]


@cache
def paper_jobs() -> tuple[dict, ...]:
    if shared_data_dir() is None:
        pytest.skip("the real datasets (../shared/data) are not available")
    # --forceall: every job of the grid, whatever a run in this checkout has already made under results/
    command = [sys.executable, "-m", "snakemake", "-n", "--forceall", "--quiet", "host", *PAPER]
    result = subprocess.run(command, cwd=REPO, env=local_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return tuple(dry_run_jobs(result.stdout))


def table_cost(job: dict):
    return TABLE.job_cost(job["rule"], job["wildcards"])


def test_every_job_requests_headroom_over_its_cost():
    jobs = paper_jobs()
    assert len(jobs) > 400
    short = []
    for job in jobs:
        cost = table_cost(job)
        if job["runtime"] * 60 < 1.5 * cost.runtime_s or job["mem_mb"] < 1.3 * cost.mem_mib * MB_PER_MIB:
            short.append(f"{job['rule']} {job['wildcards']}: asks {job['runtime']} min, {job['mem_mb']} MB for {cost}")
    assert not short, "\n".join(short[:20])


def test_the_heavy_jobs_of_each_dataset_have_rows_of_their_own():
    """Training, the analyses and W&P runs of every real dataset of the grid: its own row, not a default."""
    jobs = [j for j in paper_jobs() if j["rule"] in HEAVY and not j["wildcards"]["dataset"].startswith("syn_")]
    assert {j["rule"] for j in jobs} == HEAVY
    generic = {(j["rule"], j["wildcards"]["dataset"]) for j in jobs if table_cost(j).dataset != j["wildcards"]["dataset"]}
    assert not generic, sorted(generic)


def test_the_imdb_consistent_adversary_asks_for_its_hours():
    """W&P Test 4 on IMDB trains up to 80 epochs per lambda, hours each: the old preset (120 minutes on every
    attempt) was killed by SLURM."""
    adversaries = [j for j in paper_jobs() if j["rule"] == "wp_adversary" and j["wildcards"]["dataset"] == "imdb"]
    assert len(adversaries) == 5  # one per lambda
    for job in adversaries:
        cost = table_cost(job)
        assert cost.dataset == "imdb" and cost.runtime_s >= 3600
        assert job["runtime"] * 60 >= 1.5 * cost.runtime_s


def test_a_retry_asks_for_more_time_and_memory():
    """Attempt 1 is what the dry run printed; attempt 2 asks for more of both, for one job of every rule."""
    from snakemake.api import SnakemakeApi
    from snakemake.iocontainers import Wildcards
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    first = {}
    for job in paper_jobs():
        first.setdefault(job["rule"], job)
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(configfiles=[REPO / "config/paper.yaml"]),
            snakefile=REPO / "Snakefile",
            workdir=REPO,
        )._workflow
        for name, job in first.items():
            rule, wildcards = workflow.get_rule(name), Wildcards(fromdict=job["wildcards"])
            one, two = (rule.expand_resources(wildcards, [], attempt) for attempt in (1, 2))
            assert (one["runtime"], one["mem_mb"]) == (job["runtime"], job["mem_mb"]), name
            assert two["runtime"] > one["runtime"] and two["mem_mb"] > one["mem_mb"], name
    assert {"train", "analyze", "wp_adversary", "preprocess", "table2"} <= set(first)
