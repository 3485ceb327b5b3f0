"""The whole DAG on a tiny config in a temporary directory: every target, idempotent reruns, early config errors."""

import re

import pytest

from tests.workflow.helpers import snakemake, tiny_config

CONSOLE = {}  # the console output of the full run


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("workflow")
    result = snakemake(workdir, config=tiny_config())
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    CONSOLE["run"] = result.stdout + result.stderr
    return workdir


@pytest.mark.slow
def test_the_console_is_short_and_ends_with_a_summary(finished_run):
    """Off a terminal (captured): one line per finished job with counts, elapsed time, rule, dataset, model, seed."""
    console = CONSOLE["run"]
    assert "Shell command" not in console and "rule train:" not in console  # no job boilerplate
    assert "Finished jobid" not in console and "steps (" not in console  # Snakemake's own lines, without labels
    jobs = re.findall(r"^\[\s*(\d+)/(\d+) \d+:\d\d:\d\d\] (\w+)(?: +(.*))?$", console, flags=re.M)
    total = int(jobs[0][1])
    assert [int(done) for done, *_ in jobs] == list(range(1, total))  # every job but the `all` target, in order
    assert ("train", "syn_nli  cnn-tanh  seed 0") in {(rule, what) for _, _, rule, what in jobs}
    banner = "run the same command again.\n"  # the start banner's last line; the summary follows the jobs
    between = console[console.index(banner) + len(banner) : console.index("== attnexp: finished in")]
    assert [line for line in between.splitlines() if not line.startswith("[")] == []  # nothing but the job lines
    assert "tail -F logs/train/" in console  # where per-epoch progress shows
    summary = console[console.index("== attnexp: finished in") :]
    assert "training " in summary and "J&W analyses " in summary and "A&Z " in summary
    assert f"{finished_run.resolve()}/results/" in summary
    assert f"--directory {finished_run.resolve()} report --cores 1`" in summary  # the report command of this run


@pytest.mark.slow
def test_a_failed_job_is_named_with_its_log_whatever_quiet_says(tmp_path):
    """The default profile's `quiet: rules` hides Snakemake's "Error in rule" block; the job events still name the
    failed job, on its own line and in the closing summary."""
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"], az={"datasets": []}, wp={"datasets": []})
    config.update(device="cuda:99", gpu_jobs=True)  # unchecked before the jobs (gpu_jobs): the training job stops
    result = snakemake(tmp_path, "models", "--quiet", "rules", "host", config=config)
    assert result.returncode != 0
    console = result.stdout + result.stderr
    log = "logs/train/syn_sentiment/average-tanh/seed0.log"
    assert f"FAILED: train  syn_sentiment  average-tanh  seed 0  log: {log}" in console, console[-3000:]
    summary = console[console.index("== attnexp: FAILED") :]
    assert f"Failed:   train  syn_sentiment  average-tanh  seed 0  log: {log}" in summary


@pytest.mark.slow
def test_full_dag_produces_every_target(finished_run):
    dry = snakemake(finished_run, "--dry-run", "--forceall", "--quiet", "all")
    assert dry.returncode == 0, dry.stderr
    for dataset in ("syn_sentiment", "syn_nli", "syn_babi1"):
        for encoder in ("average", "cnn"):
            folder = finished_run / "results/models" / dataset / f"{encoder}-tanh" / "seed0"
            for name in ("model.pt", "metrics.json", "train_log.csv", "config.yaml"):
                assert (folder / name).stat().st_size > 0, folder / name
            assert (finished_run / "logs/train" / dataset / f"{encoder}-tanh" / "seed0.log").exists()
    assert not list(finished_run.rglob("*.tmp"))
    # every job's log ends with its usage, rule and wildcards (what benchmarks/paper_grid_cost.py --measured reads)
    from attnexp.pipeline.resources import job_usages

    usages = job_usages(finished_run / "logs")
    assert len(usages) == len(list((finished_run / "logs").rglob("*.log")))
    trained = {(u.wildcards["dataset"], u.wildcards["encoder"]) for u in usages if u.rule == "train"}
    assert ("syn_nli", "cnn") in trained and {"analyze", "table1", "dataset_figures"} <= {u.rule for u in usages}


@pytest.mark.slow
def test_rerun_has_nothing_to_do(finished_run):
    again = snakemake(finished_run, "--dry-run")
    assert again.returncode == 0
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_a_killed_job_is_redone_and_nothing_else(finished_run):
    """Deleting one model (as a crash would) reruns that job alone."""
    target = finished_run / "results/models/syn_nli/average-tanh/seed0/metrics.json"
    target.unlink()
    dry = snakemake(finished_run, "--dry-run", "--quiet", "rules")
    assert dry.returncode == 0
    assert "train" in dry.stdout and "preprocess" not in dry.stdout
    assert snakemake(finished_run).returncode == 0 and target.exists()


def test_invalid_config_fails_before_any_job(tmp_path):
    result = snakemake(tmp_path, config=tiny_config(encoders=["lstm", "transformr"]))
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "encoders[1]" in output and "'transformr'" in output and "lstm" in output
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_rerunning_jobs_gives_byte_identical_files_readable_by_collaborators(finished_run):
    """Same config and seed: preprocessing and training (J&W and A&Z) rerun to the same bytes (PDFs and model.pt
    also in tests/test_io.py); every file under results/ gets the umask's permissions, not the temp files' 0600."""
    import os
    import stat

    from attnexp import paths

    targets = [
        *(v for k, v in paths.preprocessed_files("syn_sentiment").items() if k != "timings"),
        *(v for k, v in paths.model_files("syn_sentiment", "average", "tanh", 0).items() if k != "timings"),
        paths.model_files("syn_agreement", "transformer", "self", 0)["model"],
    ]
    before = {target: (finished_run / target).read_bytes() for target in targets}
    rerun = snakemake(finished_run, "--force", *targets)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    changed = [target for target in targets if (finished_run / target).read_bytes() != before[target]]
    assert changed == []
    mask = os.umask(0)
    os.umask(mask)
    modes = {stat.S_IMODE(p.stat().st_mode) for p in (finished_run / "results").rglob("*") if p.is_file()}
    assert modes == {0o666 & ~mask}
