"""`analyses.test_sample`: a seeded sample of a split that keeps its order; null (the default) keeps every row."""

import pandas as pd
import pytest

from attnexp.data.sampling import seeded_sample
from attnexp.pipeline.plan import Plan
from attnexp.pipeline.settings import AnalyzeSettings, analysis_settings
from tests.factories import validated_config


@pytest.fixture
def rows() -> pd.DataFrame:
    lengths = sorted([3, 9, 4, 12, 7, 5, 8, 10, 6, 11] * 3)  # a length-sorted split, as the analyses read it
    return pd.DataFrame({"instance_id": [f"i{k:02d}" for k in range(len(lengths))], "length": lengths})


def test_a_sample_keeps_the_split_order_and_draws_without_replacement(rows):
    sample = seeded_sample(rows, 12, seed=3)
    assert len(sample) == 12 and sample["instance_id"].is_unique
    positions = [rows.index[rows["instance_id"] == i][0] for i in sample["instance_id"]]
    assert positions == sorted(positions)  # the original (length-sorted) order
    assert sample["length"].is_monotonic_increasing
    assert list(sample.index) == list(range(12))


def test_the_same_seed_draws_the_same_rows_and_another_seed_others(rows):
    first, again = seeded_sample(rows, 12, seed=3), seeded_sample(rows.copy(), 12, seed=3)
    assert first.equals(again)
    assert list(seeded_sample(rows, 12, seed=4)["instance_id"]) != list(first["instance_id"])


@pytest.mark.parametrize("n", [None, 30, 31, 1000])
def test_null_or_at_least_the_split_size_keeps_every_row(rows, n):
    assert seeded_sample(rows, n, seed=0).equals(rows)


def test_the_config_validates_and_defaults_to_the_whole_test_set():
    default = analysis_settings(validated_config(), batch_size=4)
    assert (default.test_sample.n, default.test_sample.seed) == (None, 0)
    sampled = analysis_settings(validated_config(analyses={"test_sample": {"n": 150, "seed": 7}}), batch_size=4)
    assert (sampled.test_sample.n, sampled.test_sample.seed) == (150, 7)
    config = validated_config(analyses={"test_sample": {"n": 150, "seed": 7}})
    job = AnalyzeSettings.from_plan(Plan.from_config(config), "syn_sentiment", 0, "lstm", "tanh")
    assert AnalyzeSettings.from_param(job.as_param()) == job  # what the rule passes as params, and the job reads back
    assert job.as_param()["analysis"]["test_sample"] == {"n": 150, "seed": 7}
    from attnexp.config import ConfigError

    for bad in ({"n": 0}, {"n": "all"}, {"seed": -1}, {"size": 10}):
        with pytest.raises(ConfigError):
            validated_config(analyses={"test_sample": bad})
