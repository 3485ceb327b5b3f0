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
    assert "xdg-open results/report.html" in runsummary.success_summary(str(log), tmp_path)


def test_error_summary_names_the_failed_rule_and_its_log(tmp_path):
    log = tmp_path / "2026-11-23T110210.000001.snakemake.log"
    log.write_text(LOG + ERROR)
    summary = runsummary.error_summary([str(log)], tmp_path, now=datetime(2026, 11, 23, 11, 2, 40))
    assert "FAILED after 0:00:30" in summary
    assert "Failed:   train  log: logs/train/syn_nli/lstm-tanh/seed0.log" in summary
    assert "run the same command again" in summary and str(log) in summary
