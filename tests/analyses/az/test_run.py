"""The A&Z driver: typed settings from the schema, one run's files, the combination across seeds."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from attnexp.analyses.az.settings import AZSettings
from attnexp.config import PACKAGED_SCHEMA, validate_config
from attnexp.io import write_csv, write_parquet
from attnexp.models.checkpoint import save_model
from attnexp.pipeline.az import run_az_analyse, run_az_combine
from attnexp.pipeline.plan import Plan
from attnexp.pipeline.settings import AZAnalysisSettings, TableSettings, az_settings
from tests.analyses.az.test_az import tiny_model, tiny_rows

REPO = Path(__file__).resolve().parents[3]
SCHEMA = PACKAGED_SCHEMA


def default_config() -> dict:
    return validate_config(yaml.safe_load((REPO / "config/config.yaml").read_text()), SCHEMA)


def test_settings_mirror_the_schema_without_defaults():
    section = yaml.safe_load(SCHEMA.read_text())["properties"]["az"]["properties"]
    for field in dataclasses.fields(AZSettings):
        assert field.name in section, f"{field.name} is not a config key of az"
        assert field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    settings = az_settings(default_config())
    assert settings.relevance_row == "cls" and settings.gradient == "auto" and settings.rollout_residual is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.batch_size = 1


def test_run_writes_every_file_of_one_run(tmp_path):
    from attnexp import paths

    rows = pd.concat(
        [tiny_rows("bc", 12, seed=s).assign(split=split) for s, split in ((0, "train"), (1, "dev"), (2, "test"))],
        ignore_index=True,
    )
    rows["instance_id"] = [f"x{i}" for i in range(len(rows))]
    rows["rationale"] = [[1] for _ in range(len(rows))]
    write_parquet(tmp_path / "instances.parquet", rows)
    save_model(tiny_model(), tmp_path / "model.pt")
    config = default_config()
    az = dataclasses.replace(az_settings(config), n_examples=5, batch_size=2)
    settings = dataclasses.replace(AZAnalysisSettings.from_plan(Plan.from_config(config), "tiny", 0), az=az)
    files = {**paths.az_files("tiny", 0), **paths.az_erasure_files("tiny", 0)}
    outputs = {key: tmp_path / Path(path).name for key, path in files.items()}
    inputs = {"model": tmp_path / "model.pt", "instances": tmp_path / "instances.parquet"}
    run_az_analyse(inputs=inputs, outputs=outputs, settings=settings)
    relevance = pd.read_parquet(outputs["relevance"])
    assert len(relevance) == 5 and relevance["instance_id"].is_monotonic_increasing
    assert len(relevance["raw"].iloc[0]) == 2 and list(relevance["subject"].iloc[0]) == [1]
    summary = pd.read_csv(outputs["summary"])
    assert len(summary) == 3 * 3 * 2 and summary["n"].eq(5).all()
    recovery = pd.read_csv(outputs["recovery"])
    assert set(recovery["method"]) == {"raw", "rollout", "flow", "blankout", "grad_x_input", "grad_l2"}
    assert len(pd.read_parquet(outputs["correlations"])) == 5 * 3 * 3 * 2
    assert "flow_seconds" not in relevance and len(json.loads(outputs["timings"].read_text())["flow_seconds"]) == 5
    erased = pd.read_parquet(outputs["erasure_input"])  # the A&Z rankings through ERASER's test
    assert set(erased["ranking"]) == {"raw", "rollout", "flow", "blankout", "grad_x_input", "random", "rationale"}
    assert erased.groupby("ranking")["instance_id"].nunique().eq(5).all()


def summary_frame(task: str, mean: float, n_nan: int = 0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "task": task,
            "method": ["raw", "raw"],
            "importance": "grad",
            "layer": [1, 2],
            "mean": [mean, mean / 2],
            "std": [0.1, 0.2],
            "n": 10,
            "n_nan": n_nan,
        }
    )


def recovery_frame(task: str, top1: float) -> pd.DataFrame:
    return pd.DataFrame(
        {"task": task, "method": ["raw", "grad"], "layer": [1, 0], "top1": top1, "mrr": 1.0, "share": 0.5, "n": 10}
    )


def test_combine_runs_keeps_one_seed_and_averages_several(tmp_path):
    runs = []
    for task, seed, mean in (("a", 0, 0.2), ("a", 1, 0.6), ("b", 0, -0.4)):
        run = {
            "dataset": task,
            "seed": seed,
            "summary": tmp_path / f"{task}{seed}_s.csv",
            "recovery": tmp_path / f"{task}{seed}_r.csv",
        }
        write_csv(run["summary"], summary_frame(task, mean, n_nan=seed))
        write_csv(run["recovery"], recovery_frame(task, top1=mean))
        runs.append(run)
    outputs = {"summary": tmp_path / "summary.csv", "recovery": tmp_path / "recovery.csv"}
    run_az_combine(inputs={}, outputs=outputs, settings=TableSettings(table="az_combine", runs=runs))
    summary, recovery = pd.read_csv(outputs["summary"]), pd.read_csv(outputs["recovery"])
    assert len(summary) == 4 and set(summary["task"]) == {"a", "b"}  # (task, layer): one row per seed group
    a = summary[summary["task"] == "a"].set_index("layer")
    assert a["n_seeds"].eq(2).all() and np.isclose(a.loc[1, "mean"], 0.4) and np.isclose(a.loc[1, "mean_seed_std"], 0.2)
    assert a.loc[1, "n"] == 20 and a.loc[1, "n_nan"] == 1 and np.isclose(a.loc[2, "std"], 0.2)
    b = summary[summary["task"] == "b"].set_index("layer")
    assert b["n_seeds"].eq(1).all() and b.loc[1, "mean"] == -0.4 and b.loc[1, "mean_seed_std"] == 0 and b.loc[1, "n"] == 10
    found = recovery.set_index(["task", "method"])
    assert np.isclose(found.loc[("a", "raw"), "top1"], 0.4) and found.loc[("b", "grad"), "top1"] == -0.4


def test_combine_runs_without_ground_truth(tmp_path):
    run = {"dataset": "a", "seed": 0, "summary": tmp_path / "s.csv", "recovery": tmp_path / "r.csv"}
    write_csv(run["summary"], summary_frame("a", 0.5))
    write_csv(run["recovery"], recovery_frame("a", 0.5).iloc[:0])
    outputs = {"summary": tmp_path / "out_s.csv", "recovery": tmp_path / "out_r.csv"}
    run_az_combine(inputs={}, outputs=outputs, settings=TableSettings(table="az_combine", runs=[run]))
    recovery = pd.read_csv(outputs["recovery"])
    assert recovery.empty and "top1" in recovery.columns
