"""Threads and GPU requests in the DAG: `threads` per kind of job from the config, `gpu=1` on exactly the GPU-capable
jobs when `gpu_jobs` (or a CUDA device) says so (the CPU-only default: tests/models/test_device.py)."""

import re

from tests.workflow.helpers import snakemake, tiny_config

GPU_RULES = {"train", "train_transformer", "analyze", "az_analyse", "wp_train", "wp_adversary", "wp_jw_adversary"}


def _jobs(output: str) -> list[dict]:
    """rule, threads and resources of every job of a dry run's printout."""
    jobs = []
    for block in re.split(r"\n(?=rule |localrule )", output):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if rule:
            threads = re.search(r"\n\s+threads: (\d+)", block)
            resources = re.search(r"\n\s+resources: (.*)", block)
            jobs.append(
                {
                    "rule": rule.group(1),
                    "threads": int(threads.group(1)) if threads else 1,
                    "resources": resources.group(1) if resources else "",
                }
            )
    return jobs


def test_dry_run_shows_configured_threads_and_gpu_requests(tmp_path):
    config = tiny_config(threads={"train": 2, "analysis": 3}, gpu_jobs=True, device="cuda")  # not checked here
    result = snakemake(tmp_path, "--dry-run", "--cores", "4", "--forceall", "--quiet", "host", config=config, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    jobs = _jobs(result.stdout + result.stderr)
    rules = {job["rule"] for job in jobs}
    assert {"train", "analyze", "wp_train"} <= rules
    for job in jobs:
        gpu = "gpu=1" in job["resources"]
        assert gpu == (job["rule"] in GPU_RULES), job
        if job["rule"] in {"train", "train_transformer", "wp_train", "wp_adversary"}:
            assert job["threads"] == 2, job
        elif job["rule"] in {"analyze", "az_analyse", "wp_jw_adversary"}:
            assert job["threads"] == 3, job
        else:
            assert job["threads"] == 1, job
