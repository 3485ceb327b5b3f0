"""The conventions of the Snakemake workflow catalog: the `.test` configurations dry-run, in an environment with
Snakemake but without the jobs' scientific stack (as under `--sdm conda`, where only the jobs get it).

`.test/config/config.yaml` is the catalog's test configuration (the whole DAG of the three papers); each further
scenario `.test/config_<name>/config.yaml` extends it, run as the catalog's CI runs them:
`snakemake --directory .test --configfile .test/config_<name>/config.yaml`."""

import re
import shutil
import subprocess
import sys

import pytest
import yaml

from attnexp import paths
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


# scenario -> rules the dry run must schedule (at least one job each)
SCENARIOS = {
    "config": ("train", "analyze", "wp_train", "az_analyse", "table2"),  # the job table spans all three papers
    "config_hf": ("hf_tokenize", "hf_model", "hf_az", "hf_analyze", "hf_correlation_figure", "hf_cls_maps"),
    "config_user": ("preprocess", "train", "analyze", "train_transformer", "az_analyse", "wp_train"),
    # issue 36; az_pronouns: A&Z Fig. 4 of its prompted LM (tests/workflow/test_pronoun_workflow.py runs it for real)
    "config_decoder": ("hf_tokenize", "hf_model", "hf_az", "hf_analyze", "hf_figures", "hf_cls_maps", "az_pronouns"),
}
CHECKPOINTS = {
    "config_hf": [("tiny_bert", "bert", "tiny_checkpoint")],
    "config_decoder": [("tiny_llama", "llama", "tiny_checkpoint"), ("tiny_llama_prompted", "llama", "tiny_lm_checkpoint")],
}


def _prepare_hf(workdir, scenario: str):
    """The scenario's checkpoints (`resources/tiny_bert`, `resources/tiny_llama`, ..., as its config says): tiny local
    models written with this environment's torch and transformers, so validation finds real save_pretrained
    directories."""
    import tests.hf_fixtures as fixtures

    models = yaml.safe_load((REPO / f".test/{scenario}/config.yaml").read_text())["hf"]["models"]
    for name, kind, builder in CHECKPOINTS[scenario]:
        getattr(fixtures, builder)(workdir / models[name]["checkpoint"], kind)


# A declared dataset's files are checked at parse time (attnexp.datasets.user.declaration_problems), with the
# standard library only: the user scenario dry-runs where the jobs' stack is blocked as well as where it is importable.
CASES = [
    pytest.param("config", True, id="config"),
    pytest.param("config_hf", True, id="config_hf"),
    pytest.param("config_decoder", True, id="config_decoder"),
    pytest.param("config_user", True, id="config_user"),
    pytest.param("config_user", False, id="config_user-with-stack"),
]


@pytest.mark.parametrize(("scenario", "blocked"), CASES)
def test_the_test_configurations_dry_run(tmp_path, scenario, blocked):
    """`blocked`: with the scientific stack's imports blocked for the workflow and attnexp (BLOCKER)."""
    for name in ("LICENSE", "CITATION.cff", ".snakemake-workflow-catalog.yml"):
        assert (REPO / name).stat().st_size > 0, name
    assert "Jain" in (REPO / "CITATION.cff").read_text() and "MIT" in (REPO / "LICENSE").read_text()
    workdir = tmp_path / "test"  # a copy of .test: its config folders (with their data files), nothing a run left
    for folder in (REPO / ".test").glob("config*"):
        shutil.copytree(folder, workdir / folder.name)
    if scenario in CHECKPOINTS:
        _prepare_hf(workdir, scenario)
    env = local_env()
    if blocked:
        (tmp_path / "blocker").mkdir()
        (tmp_path / "blocker/sitecustomize.py").write_text(BLOCKER)
        env["PYTHONPATH"] = f"{tmp_path / 'blocker'}:{env['PYTHONPATH']}"
    extra = [] if scenario == "config" else ["--configfile", str(workdir / scenario / "config.yaml")]
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), "-n", "--cores", "2"]
    command += ["--quiet", "host"]  # list every job with its outputs (the default profile's quiet: [rules, host] does not)
    result = subprocess.run([*command, *extra], env=env, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", output, flags=re.M))  # Snakemake's job-count table
    for rule in SCENARIOS[scenario]:
        assert int(jobs.get(rule, 0)) >= 1, (rule, jobs)
    config = yaml.safe_load((REPO / ".test" / scenario / "config.yaml").read_text())
    if scenario == "config":
        assert len(config["datasets"]) == 1 and len(config["encoders"]) == 1  # tiny
    elif scenario == "config_user":
        (name,) = config["user_datasets"]
        assert config["datasets"] == [name] and paths.preprocessed_files("syn_sentiment")["meta"] not in output
        for path in (
            paths.preprocessed_files(name)["meta"],
            paths.model_files(name, "average", "tanh", 0)["model"],
            paths.analysis_files(name, "average", "tanh", 0)["kendall"],
        ):
            assert path in output, path
        rows = (workdir / config["user_datasets"][name]["path"]).read_text().splitlines()
        assert 24 <= len(rows) - 1 <= 100  # a few dozen rows: tiny
    else:
        names = [name for name, _, _ in CHECKPOINTS[scenario]]
        assert list(config["hf"]["models"]) == names
        for name in names:
            assert paths.hf_model_files(name, "syn_sentiment", 0)["metrics"] in output
