"""The console's closing summary: jobs per stage from Snakemake's log, wall time, where results and report are,
and for a failed run the failed rule with its log."""

from datetime import datetime

from attnexp import runsummary

LOG = """Job stats:
Finished jobid: 3 (Rule: synthesize)
1 of 6 steps (17%) done
Finished jobid: 2 (Rule: train)
Finished jobid: 5 (Rule: train)
Finished jobid: 7 (Rule: wp_train)
Finished jobid: 9 (Rule: table2)
Finished jobid: 0 (Rule: all)
"""
ERROR = """[Mon Nov 23 11:02:19 2026]
Error in rule train:
    message: None
    jobid: 4
    input: results/preprocessed/syn_nli/meta.json
    output: results/models/syn_nli/lstm-tanh/seed0/metrics.json
    log: logs/train/syn_nli/lstm-tanh/seed0.log (check log file(s) for error details)

Logfile logs/train/syn_nli/lstm-tanh/seed0.log:
"""


def test_jobs_are_counted_per_stage_in_run_order_without_the_targets():
    assert runsummary.finished_by_stage(LOG) == {"data": 1, "training": 2, "W&P": 1, "J&W tables & figures": 1}
    assert runsummary.stage_of("az_analyse") == "A&Z" and runsummary.stage_of("all") is None


def test_success_summary_names_stages_wall_time_results_and_how_to_get_the_report(tmp_path):
    log = tmp_path / ".snakemake/log/2026-11-23T110210.159225.snakemake.log"
    log.parent.mkdir(parents=True)
    log.write_text(LOG)
    summary = runsummary.success_summary([str(log)], tmp_path, now=datetime(2026, 11, 23, 12, 3, 15))
    assert "finished in 1:01:05" in summary
    assert "5 jobs (data 1, training 2, W&P 1, J&W tables & figures 1)" in summary
    assert f"{tmp_path.resolve()}/results/" in summary and "snakemake report" in summary  # no report yet
    (tmp_path / "results").mkdir()
    (tmp_path / "results/report.html").write_text("<html>")
    assert f"xdg-open {tmp_path.resolve()}/results/report.html" in runsummary.success_summary(str(log), tmp_path)


def test_error_summary_names_the_failed_rule_and_its_log(tmp_path):
    log = tmp_path / "2026-11-23T110210.000001.snakemake.log"
    log.write_text(LOG + ERROR)
    summary = runsummary.error_summary([str(log)], tmp_path, now=datetime(2026, 11, 23, 11, 2, 40))
    assert "FAILED after 0:00:30" in summary
    assert "Failed:   train  log: logs/train/syn_nli/lstm-tanh/seed0.log" in summary
    assert "run the same command again" in summary and str(log) in summary


def _log(tmp_path):
    log = tmp_path / ".snakemake/log/2026-11-23T110210.159225.snakemake.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(LOG)
    return str(log)


def _touch(path, mtime):
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    os.utime(path, (mtime, mtime))


def test_the_report_hint_keeps_the_runs_configfile_config_and_directory(tmp_path):
    import shlex

    snakefile = tmp_path / "repo/Snakefile"
    assert runsummary.report_command(snakefile.parent, snakefile) == "snakemake report --cores 1"
    configfile = tmp_path / "own.yaml"
    command = runsummary.report_command(tmp_path / "work", snakefile, [configfile], ["datasets=[syn_nli, x]"])
    words = shlex.split(command)
    assert words[:5] == ["snakemake", "-s", str(snakefile.resolve()), "--directory", str((tmp_path / "work").resolve())]
    assert words[5:] == ["report", "--cores", "1", "--configfile", str(configfile), "--config", "datasets=[syn_nli, x]"]
    summary = runsummary.success_summary(_log(tmp_path), tmp_path, command=command)
    assert f"not built yet: `{command}` writes" in summary and "make report" not in summary


def test_the_printed_report_command_runs_as_typed(tmp_path):
    """The hint of a run in another directory with its own config file, through the real command line (with
    --summary: the files it would make, nothing run)."""
    import shlex
    import subprocess
    import sys

    from tests.conftest import REPO
    from tests.workflow.helpers import local_env

    configfile = tmp_path / "own.yaml"
    configfile.write_text((REPO / ".test/config/config.yaml").read_text())
    command = runsummary.report_command(tmp_path / "work", REPO / "Snakefile", [configfile], ["seeds=[3]"])
    words = shlex.split(command)
    done = subprocess.run(
        [sys.executable, "-m", *words, "--summary"], cwd="/", env=local_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    files = {line.split("\t")[0] for line in done.stdout.splitlines()}
    assert "results/report.html" in files and "results/models/syn_sentiment/average-tanh/seed3/metrics.json" in files
    assert not any("syn_babi" in f for f in files)  # this run's grid, not the default one


def test_the_report_is_stale_when_any_reported_output_is_newer_or_missing(tmp_path):
    report = tmp_path / "results/report.html"
    _touch(report, 2000)
    _touch(tmp_path / "results/tables/jw/t.html", 1000)
    reported = ["results/tables/jw/t.html", "results/figures/az/f.png"]
    _touch(tmp_path / "results/figures/az/f.png", 1500)
    assert not runsummary.report_is_stale(tmp_path, reported)
    _touch(tmp_path / "results/figures/az/f.png", 3000)
    assert runsummary.report_is_stale(tmp_path, reported)
    (tmp_path / "results/figures/az/f.png").unlink()
    assert runsummary.report_is_stale(tmp_path, reported)  # missing from the report
    _touch(tmp_path / "results/figures/az/f.png", 1500)
    _touch(tmp_path / "results/wp/syn_sentiment/points.csv", 2500)  # outside tables/ and figures/
    assert runsummary.report_is_stale(tmp_path, []) and not runsummary.report_is_stale(tmp_path, reported)
    summary = runsummary.success_summary(_log(tmp_path), tmp_path)
    assert "is older than the results: `snakemake report --cores 1` (or `make report`) rebuilds it" in summary


def test_models_near_chance_are_flagged_in_the_summary(tmp_path):
    import json

    meta = {"classes": ["neg", "pos"], "class_counts": {"test": {"0": 50, "1": 50}}, "sizes": {"test": 100}}
    _touch(tmp_path / "results/preprocessed/d/meta.json", 1000)
    (tmp_path / "results/preprocessed/d/meta.json").write_text(json.dumps(meta))
    for model, accuracy in (("lstm-tanh", 0.52), ("cnn-tanh", 0.9)):
        folder = tmp_path / f"results/models/d/{model}/seed0"
        folder.mkdir(parents=True)
        (folder / "metrics.json").write_text(json.dumps({"accuracy": accuracy, "n": 100}))
    summary = runsummary.success_summary(_log(tmp_path), tmp_path)
    assert "Warning:  1 model near chance level" in summary and "d lstm-tanh seed 0 (0.52 vs 0.50)" in summary
    assert "cnn-tanh" not in summary
