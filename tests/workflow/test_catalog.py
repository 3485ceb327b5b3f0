"""The conventions of the Snakemake workflow catalog: the `.test` configuration dry-runs, in an environment with
Snakemake but without the jobs' scientific stack (as under `--sdm conda`, where only the jobs get it)."""

import shutil
import subprocess
import sys

import yaml

from tests.conftest import REPO
from tests.workflow.helpers import local_env

BLOCKED = ("torch", "pandas", "numpy", "scipy", "sklearn", "matplotlib", "spacy", "pyarrow")
# Installed into every Python of the subprocess (sitecustomize): an import statement of the workflow (Snakefile,
# rule files) or of attnexp that names the jobs' stack fails, even where Snakemake's own plugins loaded it already.
BLOCKER = f"""import builtins
import sys

_import = builtins.__import__


def _workflow_import(name, globals=None, locals=None, fromlist=(), level=0):
    caller = sys._getframe(0).f_back
    origin = "" if caller is None else f"{{caller.f_globals.get('__name__')}} {{caller.f_code.co_filename}}"
    if level == 0 and name.split(".")[0] in {BLOCKED!r} and ("attnexp" in origin or ".smk" in origin or "Snakefile" in origin):
        raise ImportError(f"{{name}} imported at parse time by {{origin}}: a plain Snakemake environment has none")
    return _import(name, globals, locals, fromlist, level)


builtins.__import__ = _workflow_import
"""


def test_the_test_configuration_dry_runs_without_the_scientific_stack(tmp_path):
    for name in ("LICENSE", "CITATION.cff", ".snakemake-workflow-catalog.yml"):
        assert (REPO / name).stat().st_size > 0, name
    assert "Jain" in (REPO / "CITATION.cff").read_text() and "MIT" in (REPO / "LICENSE").read_text()
    workdir = tmp_path / "test"
    shutil.copytree(REPO / ".test/config", workdir / "config")
    (tmp_path / "blocker").mkdir()
    (tmp_path / "blocker/sitecustomize.py").write_text(BLOCKER)
    env = local_env()
    env["PYTHONPATH"] = f"{tmp_path / 'blocker'}:{env['PYTHONPATH']}"
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), "-n", "--cores", "2"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    for rule in ("train", "analyze", "wp_train", "az_analyse", "table2"):
        assert f"\n{rule} " in output, rule  # the job table spans all three papers
    config = yaml.safe_load((REPO / ".test/config/config.yaml").read_text())
    assert len(config["datasets"]) == 1 and len(config["encoders"]) == 1  # tiny
