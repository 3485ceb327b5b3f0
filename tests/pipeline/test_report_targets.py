"""The report covers every table and figure the grid makes: each report()-tagged output of `all` (a table's HTML
page, a figure's PNG) is built by the `report` target too. Hugging Face figures once were missing."""

import subprocess
import sys

import pytest
import yaml

from tests.conftest import REPO
from tests.workflow.helpers import local_env


def reported_outputs(workdir, configfile, target: str) -> set[str]:
    """The HTML tables and PNG figures in the DAG of `target` (Snakemake's --summary, which runs nothing)."""
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir)]
    command += ["--configfile", str(configfile), "--summary", target]
    done = subprocess.run(command, capture_output=True, text=True, env=local_env(), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    files = {line.split("\t")[0] for line in done.stdout.splitlines()[1:] if line}
    return {f for f in files if f.endswith((".png", ".html")) and f != "results/report.html"}


@pytest.mark.slow  # a real command (a whole-grid estimate, a fresh venv, a dry run, the example): not the edit loop
def test_the_report_target_covers_every_reported_output_of_all(tmp_path):
    from tests.hf_fixtures import tiny_checkpoint

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    checkpoint = tiny_checkpoint(tmp_path / "tiny")
    config["hf"] = {"models": {"tiny": {"checkpoint": str(checkpoint)}}, "datasets": ["syn_sentiment"]}
    configfile = tmp_path / "config.yaml"
    configfile.write_text(yaml.safe_dump(config))
    everything = reported_outputs(tmp_path, configfile, "all")
    assert any("/hf/tiny/" in f for f in everything)  # the Hugging Face figures are among them
    assert {f.split("/")[2] for f in everything if f.startswith("results/figures/")} == {"jw", "wp", "az", "erasure"}
    assert everything <= reported_outputs(tmp_path, configfile, "report")
    assert everything <= reported_outputs(tmp_path, configfile, "figures") | reported_outputs(tmp_path, configfile, "tables")
