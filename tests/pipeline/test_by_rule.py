"""A script shared by several rules runs the rule's own job (`attnexp.pipeline.ByRule`), never one that guesses its
kind from which files it was given."""

import re
from types import SimpleNamespace

import pytest

from attnexp.pipeline import ByRule, call
from attnexp.pipeline import wp as wp_jobs
from attnexp.pipeline.settings import DownloadSettings
from tests.conftest import REPO


def fake_snakemake(tmp_path, rule: str) -> SimpleNamespace:
    """What `call` reads of a script's `snakemake` object."""
    names = SimpleNamespace(items=lambda: [])
    return SimpleNamespace(
        rule=rule,
        input={},
        output={},
        params=SimpleNamespace(settings=DownloadSettings("sst").as_param()),
        threads=1,
        log=[str(tmp_path / "job.log")],
        wildcards=names,
    )


def test_call_runs_the_rules_own_job_and_refuses_another_rule(tmp_path):
    ran = []

    def first(*, inputs, outputs, settings: DownloadSettings, threads: int = 1) -> None:
        ran.append(("first", settings.archive))

    def second(*, inputs, outputs, settings: DownloadSettings, threads: int = 1) -> None:
        ran.append(("second", settings.archive))

    jobs = ByRule(rule_a=first, rule_b=second)
    call(jobs, fake_snakemake(tmp_path, "rule_b"))
    assert ran == [("second", "sst")]
    with pytest.raises(ValueError, match="rule 'rule_c' has no job here; the script serves rule_a, rule_b"):
        call(jobs, fake_snakemake(tmp_path, "rule_c"))


def test_each_shared_script_serves_exactly_the_rules_that_run_it():
    scripts = {}  # script name -> the rules that run it
    for rules in (REPO / "workflow/rules").glob("*.smk"):
        for rule, body in re.findall(r"^rule (\w+):\n((?:[ \t]+.*\n|\n)*)", rules.read_text(), flags=re.M):
            found = re.search(r'script:\s*"\.\./scripts/(\w+)\.py"', body)
            if found:
                scripts.setdefault(found.group(1), set()).add(rule)
    shared = {"wp_variance": wp_jobs.run_wp_variance, "wp_figures": wp_jobs.run_wp_figures}
    for script, jobs in shared.items():
        assert isinstance(jobs, ByRule) and set(jobs) == scripts[script], script
        assert f"call({'run_' + script}, snakemake)" in (REPO / f"workflow/scripts/{script}.py").read_text()


def test_the_wp_figures_script_draws_each_rules_figures(tmp_path):
    import numpy as np
    import pandas as pd

    from attnexp.io import write_json, write_parquet
    from attnexp.pipeline.plan import Plan
    from attnexp.pipeline.settings import FigureSettings, default_config

    rng = np.random.default_rng(0)
    n = 40
    variance = {"attn_diff": rng.uniform(0, 0.6, n), "y_diff": rng.uniform(0, 1, n), "max_attn": rng.uniform(0, 1, n)}
    write_parquet(tmp_path / "variance.parquet", pd.DataFrame({**variance, "class": rng.integers(0, 2, n)}))
    points = {"model": ["seed", "uniform", "adversary"], "label": ["1", "uniform", "0.1"], "jsd": [0.1, 0.5, 0.4]}
    write_parquet(tmp_path / "points.parquet", pd.DataFrame({**points, "tvd": [0.03, 0.04, 0.05]}))
    write_json(tmp_path / "meta.json", {"classes": ["negative", "positive"]})
    plan = Plan.from_config(default_config())
    jobs = {
        "wp_variance_figures": ({"variance": "variance.parquet", "meta": "meta.json"}, ("violin", "scatter")),
        "wp_jsd_tvd_figure": ({"points": "points.parquet"}, ("jsd_tvd",)),
    }
    for rule, (inputs, figures) in jobs.items():
        settings = FigureSettings.from_plan(plan, job=rule, dataset="syn_sentiment", kind="seed")
        outputs = {f"{f}_{fmt}": str(tmp_path / f"{f}.{fmt}") for f in figures for fmt in ("png", "pdf")}
        snakemake = fake_snakemake(tmp_path, rule)
        snakemake.input, snakemake.output = {k: str(tmp_path / v) for k, v in inputs.items()}, outputs
        snakemake.params = SimpleNamespace(settings=settings.as_param())
        call(wp_jobs.run_wp_figures, snakemake)
        assert all((tmp_path / f"{f}.{fmt}").stat().st_size > 1000 for f in figures for fmt in ("png", "pdf")), rule
