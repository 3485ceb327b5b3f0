"""The console: one line per finished job (rule, dataset, model, seed, counts, elapsed time) and the failed jobs
with their logs, from Snakemake's job events (attnexp.runconsole); the closing summary's jobs per stage, wall time,
where results and report are (attnexp.runsummary)."""

import io
import logging
from datetime import datetime

from attnexp import runconsole, runsummary

TRAIN_LOG = "logs/train/syn_nli/lstm-tanh/seed0.log"


def record(event: str, **fields) -> logging.LogRecord:
    """A log record as Snakemake 9 logs a job event (its `event` field and the event's own fields)."""
    made = logging.LogRecord("snakemake.logging", logging.INFO, __file__, 0, None, None, None)
    made.__dict__.update(event=event, **fields)
    return made


def job_info(jobid: int, rule: str, log: str | None = None, **wildcards) -> logging.LogRecord:
    return record("job_info", jobid=jobid, rule_name=rule, wildcards=wildcards, log=[log] if log else [])


def finished(events: runconsole.JobEvents, jobid: int, done: int, total: int) -> None:
    events.handle(record("job_finished", job_id=jobid))
    events.handle(record("progress", done=done, total=total))


def a_run(stream=None) -> runconsole.JobEvents:
    """Six jobs of a run, one of them failed (quiet: its console block was never printed)."""
    clock = iter(range(0, 1000, 65)).__next__
    events = runconsole.JobEvents(stream, clock=clock)
    jobs = [
        job_info(3, "synthesize", family="sentiment"),
        job_info(2, "train", dataset="syn_sentiment", encoder="lstm", attention="tanh", seed="0"),
        job_info(5, "train", dataset="syn_nli", encoder="cnn", attention="tanh", seed="0"),
        job_info(7, "wp_adversary", dataset="syn_sentiment", variant="adversarial", seed="10", lam="0.1"),
        job_info(9, "table2"),
        job_info(4, "train", TRAIN_LOG, dataset="syn_nli", encoder="lstm", attention="tanh", seed="0"),
    ]
    for job in jobs:
        events.handle(job)
    for done, jobid in enumerate((3, 2, 5, 7, 9), start=1):
        finished(events, jobid, done, 7)
    events.handle(record("job_error", jobid=4, rule_name="train", log=[f"{TRAIN_LOG} (check log file(s) for error details)"]))
    return events


def test_one_line_per_finished_job_names_rule_dataset_model_seed_with_counts_and_time():
    stream = io.StringIO()
    a_run(stream)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[1/7 0:01:05] synthesize             family=sentiment"
    assert lines[1] == "[2/7 0:02:10] train                  syn_sentiment  lstm-tanh  seed 0"
    assert lines[3] == "[4/7 0:04:20] wp_adversary           syn_sentiment  adversarial  lambda 0.1  seed 10"
    assert lines[-1] == f"FAILED: train  syn_nli  lstm-tanh  seed 0  log: {TRAIN_LOG}"
    assert len(lines) == 6


def test_no_lines_where_a_plugin_draws_progress_but_failures_still_show():
    stream = io.StringIO()
    events = runconsole.JobEvents(stream, lines=False)
    events.handle(job_info(1, "train", TRAIN_LOG, dataset="syn_nli"))
    finished(events, 1, 1, 2)
    events.handle(record("job_error", jobid=1, rule_name="train", log=[TRAIN_LOG]))
    assert stream.getvalue() == f"FAILED: train  syn_nli  log: {TRAIN_LOG}\n"
    assert events.finished == ["train"]


def test_jobs_are_counted_per_stage_in_run_order_without_the_targets():
    rules = ["synthesize", "train", "train", "wp_train", "table2", "all"]
    assert runsummary.finished_by_stage(rules) == {"data": 1, "training": 2, "W&P": 1, "J&W tables & figures": 1}
    assert runsummary.stage_of("az_analyse") == "A&Z" and runsummary.stage_of("all") is None


def test_success_summary_names_stages_wall_time_results_and_how_to_get_the_report(tmp_path):
    log = tmp_path / ".snakemake/log/2026-11-23T110210.159225.snakemake.log"
    log.parent.mkdir(parents=True)
    log.write_text("")
    events = a_run()
    summary = runsummary.success_summary([str(log)], tmp_path, now=datetime(2026, 11, 23, 12, 3, 15), events=events)
    assert "finished in 1:01:05" in summary
    assert "5 jobs (data 1, training 2, W&P 1, J&W tables & figures 1)" in summary
    assert f"{tmp_path.resolve()}/results/" in summary and "snakemake report" in summary  # no report yet
    (tmp_path / "results").mkdir()
    (tmp_path / "results/report.html").write_text("<html>")
    assert f"xdg-open {tmp_path.resolve()}/results/report.html" in runsummary.success_summary(str(log), tmp_path, events=events)


def test_error_summary_names_the_failed_rule_and_its_log_from_the_job_events(tmp_path):
    """Snakemake's log of a run under `quiet: rules` holds no "Error in rule" block: the events do."""
    log = tmp_path / "2026-11-23T110210.000001.snakemake.log"
    log.write_text("Finished jobid: 3 (Rule: synthesize)\n")
    summary = runsummary.error_summary([str(log)], tmp_path, now=datetime(2026, 11, 23, 11, 2, 40), events=a_run())
    assert "FAILED after 0:00:30" in summary
    assert f"Failed:   train  syn_nli  lstm-tanh  seed 0  log: {TRAIN_LOG}" in summary
    assert "Finished: 5 jobs" in summary
    assert "run the same command again" in summary and str(log) in summary


def test_a_run_stopped_by_a_signal_reads_stopped_not_failed(tmp_path):
    """SIGINT/SIGTERM: Snakemake logs that it terminates on request; with no failed job the summary says STOPPED."""
    log = tmp_path / "2026-11-23T110210.000001.snakemake.log"
    none_failed = a_run()
    none_failed.failed = []
    for line in (  # as Snakemake 9 logs SIGINT and SIGTERM
        "Terminating processes on user request, this might take some time.",
        "Will exit after finishing currently running jobs (scheduler).",
    ):
        log.write_text(f"Finished jobid: 3 (Rule: synthesize)\n{line}\n")
        summary = runsummary.error_summary([str(log)], tmp_path, now=datetime(2026, 11, 23, 11, 2, 40), events=none_failed)
        assert summary.startswith("== attnexp: STOPPED after 0:00:30 ==") and "FAILED" not in summary
        assert (
            "Stopped:  on request (Ctrl-C or SIGTERM); no job failed" in summary
            and "Run the same command again to resume" in summary
        )
    log.write_text("Finished jobid: 3 (Rule: synthesize)\n")
    summary = runsummary.error_summary([str(log)], tmp_path, events=none_failed)
    assert "FAILED" in summary and "no job (the workflow itself stopped" in summary


def test_a_heartbeat_is_due_every_30_seconds_of_a_long_loop():
    from attnexp.runlog import PROGRESS_SECONDS, Heartbeat

    ticks = iter([0.0, 10.0, 29.9, 30.0, 45.0, 61.0, 200.0])
    beat = Heartbeat(clock=ticks.__next__)
    assert PROGRESS_SECONDS == 30.0
    assert [beat.due() for _ in range(6)] == [False, False, True, False, True, True]


def _log(tmp_path):
    log = tmp_path / ".snakemake/log/2026-11-23T110210.159225.snakemake.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("Finished jobid: 3 (Rule: synthesize)\n")
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


def _meta(workdir, meta_file="results/preprocessed/d/meta.json"):
    """A balanced test split of 100 instances (majority rate 0.50)."""
    from attnexp.io import write_json

    meta = {"classes": ["neg", "pos"], "class_counts": {"test": {"0": 50, "1": 50}}, "sizes": {"test": 100}}
    write_json(workdir / meta_file, meta)


def _metrics(workdir, metrics_file: str, accuracy: float) -> str:
    from attnexp.io import write_json

    write_json(workdir / metrics_file, {"accuracy": accuracy, "n": 100})
    return metrics_file


def test_models_near_chance_are_flagged_in_the_summary(tmp_path):
    _meta(tmp_path)
    _meta(tmp_path, "results/hf/tiny/preprocessed/d/meta.json")
    models = [
        _metrics(tmp_path, f"results/models/d/{model}/seed0/metrics.json", accuracy)
        for model, accuracy in (("lstm-tanh", 0.52), ("cnn-tanh", 0.9))
    ]
    models.append(_metrics(tmp_path, "results/hf/tiny/d/seed1/model/metrics.json", 0.49))
    models.append("results/models/d/average-tanh/seed0/metrics.json")  # not written yet (e.g. `snakemake models` ran)
    summary = runsummary.success_summary(_log(tmp_path), tmp_path, models=models)
    assert "Warning:  2 models near chance level" in summary
    assert "d lstm-tanh seed 0 (0.52 vs 0.50), d hf-tiny seed 1 (0.49 vs 0.50)" in summary
    assert "cnn-tanh" not in summary
    assert "Warning" not in runsummary.success_summary(_log(tmp_path), tmp_path)  # no models named: none warned of


def test_the_near_chance_warning_names_this_configs_models_only(tmp_path):
    """Issue 37 §4 probe 8: another config's models in the same results/ (results/models/, results/hf/) are near chance;
    the summary of this run, whose own models are not, names none of them."""
    from attnexp.pipeline.plan import Plan
    from tests.factories import validated_config

    _meta(tmp_path, "results/preprocessed/syn_sentiment/meta.json")
    _meta(tmp_path, "results/preprocessed/syn_agreement/meta.json")
    _meta(tmp_path, "results/hf/tiny/preprocessed/syn_sentiment/meta.json")
    _metrics(tmp_path, "results/models/syn_sentiment/average-tanh/seed5/metrics.json", 0.5)  # the other config's
    _metrics(tmp_path, "results/hf/tiny/syn_sentiment/seed0/model/metrics.json", 0.48)  # ... and its HF run
    ours = _metrics(tmp_path, "results/models/syn_sentiment/lstm-tanh/seed0/metrics.json", 0.95)
    az = _metrics(tmp_path, "results/models/syn_agreement/transformer-self/seed0/metrics.json", 0.97)
    models = runsummary.models_of(Plan.from_config(validated_config(), basedir="."))  # lstm-tanh seed 0, A&Z seed 0
    assert models == [ours, az]
    summary = runsummary.success_summary(_log(tmp_path), tmp_path, models=models)
    assert "Warning" not in summary and "average-tanh" not in summary and "hf-tiny" not in summary
    _metrics(tmp_path, az, 0.51)  # this run's own A&Z Transformer near chance: named, alone
    summary = runsummary.success_summary(_log(tmp_path), tmp_path, models=models)
    assert (
        "Warning:  1 model near chance level" in summary and ": syn_agreement transformer-self seed 0 (0.51 vs 0.50)" in summary
    )
