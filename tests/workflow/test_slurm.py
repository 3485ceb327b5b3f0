"""The workflow on SLURM: profiles, per-rule resource requests, and the tiny grid on a real single-node cluster.

The cluster tests start munged, slurmctld and slurmd themselves (tests/slurm/slurm-up.sh) and stop them by PID.
They skip where SLURM cannot be installed or started, unless ATTNEXP_REQUIRE_SLURM=1 (CI: .ci/run) demands it.
"""

import os
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "slurm"))
import harness  # noqa: E402

REQUIRE_SLURM = os.environ.get("ATTNEXP_REQUIRE_SLURM") == "1"


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A running single-node SLURM cluster for the module's tests; yields its bring-up time in seconds."""
    try:
        with harness.slurm_cluster(tmp_path_factory.mktemp("slurm-pids")) as seconds:
            print(f"SLURM bring-up: {seconds:.1f} s")
            yield seconds
    except harness.SlurmUnavailable as err:
        if REQUIRE_SLURM:
            pytest.fail(f"ATTNEXP_REQUIRE_SLURM=1 but {err}")
        pytest.skip(str(err))


def _show(result) -> str:
    return f"exit {result.returncode}\n--- stdout ---\n{result.stdout[-4000:]}\n--- stderr ---\n{result.stderr[-8000:]}"


def test_default_profile_stays_executor_free():
    default = yaml.safe_load((harness.REPO / "profiles/default/profile.yaml").read_text())
    assert "executor" not in default
    for name in ("slurm", "slurm-ci"):
        assert yaml.safe_load((harness.REPO / f"profiles/{name}/profile.yaml").read_text())["executor"] == "slurm"


def test_cluster_rules_declare_memory_and_runtime(tmp_path):
    """Every rule sent to the scheduler says what it needs; the rest are local rules."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import OutputSettings, ResourceSettings

    workdir = harness.make_workdir(tmp_path, harness.tiny_config())
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(cores=1), snakefile=harness.REPO / "Snakefile", workdir=workdir
        )._workflow
        local = set(workflow._localrules)
        missing = {r.name: sorted({"mem_mb", "runtime"} - set(r.resources)) for r in workflow.rules if r.name not in local}
    assert {"all", "models"} <= local
    assert {name: keys for name, keys in missing.items() if keys} == {}, (
        "declare these under resources: in workflow/rules/*.smk, or mark tiny rules `localrule: True`"
    )


def test_site_profile_plans_the_grid(tmp_path):
    """profiles/slurm is a valid profile: a dry run with it plans every job with the site placeholders."""
    workdir = harness.make_workdir(tmp_path, harness.tiny_config())
    result, _ = harness.snakemake(workdir, "-n", "--workflow-profile", str(harness.REPO / "profiles/slurm"), timeout_s=300)
    assert result.returncode == 0, _show(result)
    assert "slurm_partition=<partition>" in result.stdout
    assert "rule train:" in result.stdout


@pytest.fixture(scope="module")
def grid_runs(slurm, tmp_path_factory):
    """The tiny grid run locally and on SLURM; the SLURM run's first `preprocess` job is made to fail once
    (tests/slurm/inject), so the same run also exercises the profile's retries."""
    root = tmp_path_factory.mktemp("grid")
    local = harness.make_workdir(root / "local", harness.tiny_config())
    local_run, local_seconds = harness.run_local(local)
    assert local_run.returncode == 0, _show(local_run)

    cluster = harness.make_workdir(root / "slurm", harness.tiny_config())
    marker = root / "failed-once"
    inject = {
        "PYTHONPATH": os.pathsep.join([str(harness.HERE / "inject"), os.environ.get("PYTHONPATH", "")]),
        "ATTNEXP_FAIL_ONCE_RULE": "preprocess",
        "ATTNEXP_FAIL_ONCE_MARKER": str(marker),
    }
    cluster_run, cluster_seconds = harness.run_slurm(cluster, env=inject)
    print(f"tiny grid: local {local_seconds:.1f} s, SLURM {cluster_seconds:.1f} s incl. one retry (bring-up {slurm:.1f} s)")
    return {"local": local, "cluster": cluster, "run": cluster_run, "marker": marker}


@pytest.mark.slow
@pytest.mark.slurm
def test_tiny_grid_on_slurm_matches_local_run(grid_runs):
    run, local, cluster = grid_runs["run"], grid_runs["local"], grid_runs["cluster"]
    assert run.returncode == 0, _show(run)
    assert "has been submitted with SLURM jobid" in run.stderr, "no job went through sbatch"
    expected = harness.result_files(local)
    assert expected, "the local run produced nothing under results/"
    assert harness.result_files(cluster) == expected
    for path in expected:
        harness.assert_same_output(local / path, cluster / path)


@pytest.mark.slow
@pytest.mark.slurm
def test_failed_slurm_job_is_retried(grid_runs):
    """The first SLURM job of `preprocess` died; the profile's retries resubmitted it and the run completed."""
    run = grid_runs["run"]
    assert grid_runs["marker"].exists(), "the failure was never injected:\n" + _show(run)
    assert "Error in rule preprocess" in run.stderr and "Trying to restart job" in run.stderr, _show(run)
    assert run.returncode == 0, _show(run)
    assert (grid_runs["cluster"] / "results/preprocessed/syn_sentiment/meta.json").is_file()
