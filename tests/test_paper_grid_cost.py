"""benchmarks/paper_grid_cost.py's arithmetic: the test batches it times, the training cost it predicts and the grid's
wall time on N cores from its DAG."""

import importlib.util
import re
import sys

import pandas as pd
import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def cost():
    spec = importlib.util.spec_from_file_location("paper_grid_cost", REPO / "benchmarks/paper_grid_cost.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_timed_batches_span_the_sorted_split(cost):
    chosen, total = cost.sampled_batches(n_rows=1726, batch_size=32, count=6)
    assert total == 54 and len(chosen) == 6
    stretch = total / 6
    assert all(j * stretch <= b < (j + 1) * stretch for j, b in enumerate(chosen))  # one per equal stretch
    assert cost.sampled_batches(n_rows=64, batch_size=32, count=8) == ([0, 1], 2)


def test_training_cost_keeps_the_fixed_and_data_costs(cost):
    """wall(epochs, f) = F + f D + epochs (E + f P): the walls and the epochs on f and 2f give back
    F + D + epochs x (E + P); an epoch's fixed part E is counted once, not 1/f times."""
    fixed, data, per_epoch, epoch_fixed, f = 4.0, 10.0, 100.0, 2.0, 0.1
    epoch = lambda fraction: epoch_fixed + fraction * per_epoch  # noqa: E731
    wall = lambda epochs, fraction: fixed + fraction * data + epochs * epoch(fraction)  # noqa: E731
    walls = {"e1f": wall(1, f), "e2f": wall(2, f), "e2f2": wall(2, 2 * f), "warm_up": 1.5}
    seconds, detail = cost.training_cost({**walls, "epoch_f": epoch(f), "epoch_2f": epoch(2 * f)}, f, epochs=8)
    assert seconds == pytest.approx(fixed + 1.5 + data + 8 * (epoch_fixed + per_epoch))
    assert detail.startswith("102.0 s/epoch x 8")


def test_predictions_are_raised_by_the_worst_measured_under_prediction_of_their_kind(cost):
    predicted = pd.DataFrame(
        {"rule": ["analyze", "analyze", "train"], "dataset": ["sst", "imdb", "sst"], "model": ["lstm"] * 3}
        | {"runtime_s": [50.0, 1000.0, 60.0], "mem_mib": [1000.0, 1300.0, 800.0]}
    )
    measured = pd.DataFrame(
        {"rule": ["analyze", "analyze", "train"], "dataset": ["sst", "imdb", "sst"], "model": ["lstm"] * 3}
        | {"cpu_s": [45.0, 1100.0, 30.0], "rss_mib": [1300.0, 1950.0, 700.0]}
    )
    factors = cost.calibration(predicted, measured)
    assert factors.at["analyze", "memory"] == pytest.approx(1.5) and factors.at["analyze", "time"] == pytest.approx(1.1)
    assert factors.loc["train"].tolist() == [1.0, 1.0]  # over-predicted: never lowered
    assert "memory x1.50" in cost.calibrated(factors.loc["analyze"]) and cost.calibrated(factors.loc["train"]) == ""


def grid(cost, seconds: dict, priority: dict | None = None, threads: dict | None = None) -> dict:
    priority, threads = priority or {}, threads or {}
    return {n: cost.GridJob(n, s, threads.get(n, 1), priority.get(n, 0)) for n, s in seconds.items()}


def test_a_chain_takes_its_length_whatever_the_cores(cost):
    jobs, edges = grid(cost, {"a": 1.0, "b": 2.0, "c": 3.0}), [("a", "b"), ("b", "c")]
    assert cost.schedule_wall(jobs, edges, cores=4) == 6.0  # not max(3, 6 / 4): each waits for the one before
    assert cost.critical_path(jobs, edges) == (6.0, ["a", "b", "c"])


def test_a_fan_out_wider_than_the_cores_runs_in_rounds(cost):
    jobs = grid(cost, {"root": 1.0, **{f"leaf{i}": 2.0 for i in range(5)}})
    edges = [("root", f"leaf{i}") for i in range(5)]
    assert cost.schedule_wall(jobs, edges, cores=2) == 1.0 + 3 * 2.0  # five leaves on two cores: three rounds
    assert cost.schedule_wall(jobs, edges, cores=5) == 3.0
    assert cost.critical_path(jobs, edges)[0] == 3.0


def test_priorities_start_the_long_chain_first(cost):
    """Two cores; a short job a that a 10 s job b waits for, and two 5 s jobs c and d that nothing waits for. By cost
    alone c and d start first and b ends at 16 s; with the chain's priority a starts at once and b ends at 11 s."""
    seconds, edges = {"a": 1.0, "b": 10.0, "c": 5.0, "d": 5.0}, [("a", "b")]
    assert cost.schedule_wall(grid(cost, seconds), edges, cores=2) == 16.0
    assert cost.schedule_wall(grid(cost, seconds, priority={"a": 11, "b": 10}), edges, cores=2) == 11.0


def test_a_job_waits_until_its_threads_are_free(cost):
    jobs = grid(cost, {"wide": 3.0, "narrow": 1.0}, priority={"narrow": 1}, threads={"wide": 2})
    assert cost.schedule_wall(jobs, [], cores=2) == 4.0  # narrow holds one of the two cores first
    assert cost.schedule_wall(grid(cost, {"wide": 3.0}, threads={"wide": 8}), [], cores=2) == 3.0  # capped at the cores


def test_the_default_config_dag_comes_from_snakemake(cost):
    """The script's path: Snakemake's DAG of config/config.yaml (no job run), each job at its resources.tsv cost."""
    import networkx

    table = cost.ResourceTable.read(REPO / "workflow/resources.tsv")
    jobs, edges = cost.grid_dag([str(REPO / "config/config.yaml")], table, cores=2)
    graph = networkx.DiGraph(edges)
    assert set(graph) <= set(jobs) and networkx.is_directed_acyclic_graph(graph)
    rules = {j.rule for j in jobs.values()}
    assert {"preprocess", "train", "analyze", "all"} <= rules
    assert all(j.seconds > 0 for j in jobs.values() if j.rule in {"train", "analyze"})
    assert jobs["all{}"].seconds == 0.0 and graph.out_degree("all{}") == 0 and graph.in_degree("all{}") > 0
    assert any(jobs[a].rule == "train" and jobs[b].rule == "analyze" and jobs[a].dataset == jobs[b].dataset for a, b in edges)
    trains = [j for j in jobs.values() if j.rule == "train"]
    assert all(j.priority >= j.seconds > 0 for j in trains)  # the chain it starts, analyses included
    total = sum(j.seconds for j in jobs.values())
    wall, (path, _) = cost.schedule_wall(jobs, edges, cores=2), cost.critical_path(jobs, edges)
    assert max(path, total / 2) <= wall <= total


@pytest.mark.slow  # a real command (a whole-grid estimate, a fresh venv, a dry run, the example): not the edit loop
def test_the_readme_whole_grid_command_runs_as_shown():
    """The performance page's cost command, as shown: every job of config/paper.yaml at its workflow/resources.tsv figure."""
    import subprocess

    from tests.conftest import shared_data_dir
    from tests.workflow.helpers import local_env

    if shared_data_dir() is None:
        pytest.skip("the real datasets (../shared/data) are not available")
    shown = next(
        line.strip()
        for line in (REPO / "docs/performance.md").read_text().splitlines()
        if line.startswith("PYTHONPATH=src python benchmarks/paper_grid_cost.py --datasets --whole-grid")
    )
    command = shown.replace("python", sys.executable, 1)
    result = subprocess.run(command, shell=True, cwd=REPO, env=local_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "jobs at their resources.tsv figures, CPU-hours" in result.stdout
    total = float(re.search(r"^total ([\d.]+) CPU-hours", result.stdout, flags=re.M).group(1))
    assert total > 1.0 and re.search(r"wall time on 8 cores: at least [\d.]+ h", result.stdout)
