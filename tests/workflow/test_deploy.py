"""The workflow used as a module (issue 23 item 3): deployed into a new project as `snakedeploy deploy-workflow`
writes it (workflow/Snakefile declaring the module, `use rule * from`, the config/ folder copied), it parses and
dry-runs there, with its files found relative to its own Snakefile; its conda environment names no path relative
to itself."""

import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from tests.conftest import REPO
from tests.workflow.helpers import local_env

pytestmark = pytest.mark.slow

DEPLOYED = """configfile: "config/config.yaml"


# declare {source} as a module
module attnexp:
    snakefile:
        "{snakefile}"
    config:
        config


# use all rules from {source}
use rule * from attnexp
"""


def dry_run(cwd, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in local_env().items() if k != "PYTHONPATH"}  # the module finds its own src/
    command = [sys.executable, "-m", "snakemake", "-n", "--cores", "2", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def job_total(output: str) -> int:
    return int(re.search(r"^total\s+(\d+)$", output, flags=re.M).group(1))


@pytest.mark.parametrize("renamed", ["", " as attnexp_*"], ids=["snakedeploy", "prefixed"])
def test_the_workflow_deployed_as_a_module_dry_runs(tmp_path, renamed):
    """snakedeploy's `use rule * from attnexp`, and with every rule renamed (`as attnexp_*`, issue 33): each job
    still finds its own rule's row of workflow/resources.tsv."""
    project = tmp_path / "my-study"
    (project / "workflow").mkdir(parents=True)
    deployed = DEPLOYED.format(source=REPO, snakefile=REPO / "workflow/Snakefile")
    (project / "workflow/Snakefile").write_text(deployed.replace("from attnexp\n", f"from attnexp{renamed}\n"))
    shutil.copytree(REPO / "config", project / "config")
    deployed = dry_run(project)
    assert deployed.returncode == 0, deployed.stdout[-2000:] + deployed.stderr[-3000:]
    here = dry_run(REPO, "--forceall")
    assert job_total(deployed.stdout) == job_total(here.stdout) > 50  # the default target, `all`, as in a clone
    assert not (project / "results").exists() and not (project / "src").exists()


def test_the_standard_layout_and_the_root_snakefile_run_the_same_workflow(tmp_path):
    """workflow/Snakefile (the catalog's entry point) and the root Snakefile (a clone's) plan the same jobs."""
    shutil.copytree(REPO / "config", tmp_path / "config")
    by_root = dry_run(tmp_path, "-s", str(REPO / "Snakefile"), "--forceall")
    by_standard = dry_run(tmp_path, "-s", str(REPO / "workflow/Snakefile"), "--forceall")
    assert by_root.returncode == 0 and by_standard.returncode == 0, by_standard.stderr[-3000:]
    assert job_total(by_root.stdout) == job_total(by_standard.stdout)


def test_the_conda_environment_needs_no_path_beside_it(tmp_path):
    """Snakemake builds it from a copy under .snakemake/conda/: its pip lines, with the ATTNEXP_PIP the workflow
    sets from a checkout, install this checkout from anywhere."""
    env = yaml.safe_load((REPO / "workflow/envs/attnexp.yaml").read_text())
    (pip,) = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    assert not any(".." in line or line.startswith(("-r", "-e")) for line in pip), pip
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("\n".join(pip) + "\n")
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index", "--no-build-isolation"]
    environment = {**os.environ, "ATTNEXP_PIP": f"-e {REPO}", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    result = subprocess.run(
        [*command, "-r", str(requirements)], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0 and "Would install attnexp" in result.stdout, result.stdout + result.stderr
