"""The per-dataset W&P analysis jobs read the runs' stored files and write what `attnexp.analyses.wp` computes on
them (seed_variance.variance_table, jsd_tvd.jsd_tvd_points): the jobs hold the file I/O, the analyses the numbers."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from attnexp.io import read_parquet, write_json, write_parquet
from attnexp.paths import DONOR_FILES, RUN_FILES, in_folder
from attnexp.pipeline.settings import WPAnalysisSettings, wp_of
from tests.factories import validated_config

IDS = ["a", "b", "c", "d"]


def outputs(rng) -> tuple[pd.DataFrame, pd.DataFrame]:
    p = rng.random(len(IDS))
    attention = [rng.dirichlet(np.ones(n)).tolist() for n in (2, 3, 4, 5)]
    predictions = pd.DataFrame({"instance_id": IDS, "p": p, "pred_class": (p > 0.5).astype(int)})
    return predictions, pd.DataFrame({"instance_id": IDS, "attention": attention})


@pytest.fixture
def stored(tmp_path):
    """Runs of one dataset as the plan names them (`wp_dataset_runs`): their files and, by name, what they hold."""
    rng = np.random.default_rng(0)
    held = {}

    def run(name, seed=10):
        files = in_folder(str(tmp_path / name), {**RUN_FILES, **DONOR_FILES})
        held[name] = outputs(rng)
        write_parquet(files["test_predictions"], held[name][0])
        write_parquet(files["test_attention"], held[name][1])
        write_json(files["metrics"], {"seed": seed})
        return files

    jw = pd.DataFrame(
        {
            "instance_id": ["d", "b"] * 2,  # a sample of the test split (`analyses.test_sample`), two runs
            "run": [0, 0, 1, 1],
            "emax_jsd": rng.random(4),
            "adversarial_output": [[1 - p, p] for p in rng.random(4)],
            "original_output": [[1 - p, p] for p in rng.random(4)],
            "adversarial_attention": [rng.dirichlet(np.ones(n)).tolist() for n in (5, 3, 5, 3)],
        }
    )
    write_parquet(tmp_path / "jw_adversary.parquet", jw)
    held["jw_adversary"] = jw
    runs = {
        "base": run("base"),
        "seeds": [run("seed11", 11), run("seed12", 12)],
        "uniform": run("uniform"),
        "adversaries": [run("lambda0.5"), run("lambda2")],
        "jw_adversary": str(tmp_path / "jw_adversary.parquet"),
    }
    wp = replace(wp_of(validated_config(), "d"), lambdas={"default": (0.5, 2.0)})
    return WPAnalysisSettings("d", wp, None, runs), held


def test_the_jsd_tvd_points_job_writes_the_points_of_the_stored_runs(tmp_path, stored):
    from attnexp.analyses.wp.jsd_tvd import jsd_tvd_points
    from attnexp.pipeline.wp import run_wp_jsd_tvd_points

    settings, held = stored
    written = {"points": str(tmp_path / "jsd_tvd_points.parquet")}
    run_wp_jsd_tvd_points(inputs={}, outputs=written, settings=settings)
    points = read_parquet(written["points"])
    wp = settings.wp
    expected = jsd_tvd_points(
        "d",
        held["base"],
        [(11, held["seed11"]), (12, held["seed12"])],
        held["uniform"],
        [held["lambda0.5"], held["lambda2"]],
        [0.5, 2.0],
        wp.tvd_binary,
        wp.report_aggregation,
        held["jw_adversary"],
    )
    pd.testing.assert_frame_equal(points, expected)
    assert list(points["label"]) == ["11", "12", "uniform", "0.5", "2", "per-instance"]
    assert list(points["n"]) == [4, 4, 4, 4, 4, 2]


def test_the_variance_jobs_write_the_variance_tables_of_the_stored_runs(tmp_path, stored):
    from attnexp.analyses.wp.seed_variance import variance_table
    from attnexp.pipeline.wp import run_wp_adversary_variance, run_wp_seed_variance

    settings, held = stored
    variant = settings.wp.seed_plot_variant
    written = {"seed_variance": str(tmp_path / "seed_variance.parquet"), "adv_variance": str(tmp_path / "adv.parquet")}
    run_wp_seed_variance(inputs={}, outputs=written, settings=settings)
    expected = variance_table(held["base"], [held["seed11"], held["seed12"]], variant)
    pd.testing.assert_frame_equal(read_parquet(written["seed_variance"]), expected)

    run_wp_adversary_variance(inputs={}, outputs=written, settings=settings)
    adversary = read_parquet(written["adv_variance"])
    assert list(adversary["instance_id"]) == ["b", "d"]  # the sampled instances, in the base run's order
    jw = held["jw_adversary"]
    compared = [
        (
            pd.DataFrame({"instance_id": part["instance_id"], "p": [o[1] for o in part["adversarial_output"]]}),
            part[["instance_id"]].assign(attention=part["adversarial_attention"]),
        )
        for _, part in jw.groupby("run", sort=True)
    ]
    pd.testing.assert_frame_equal(adversary, variance_table(held["base"], compared, variant))
