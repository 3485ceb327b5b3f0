"""The near-chance flag: an exact one-sided binomial test against the majority-class rate, in pure Python."""

import pytest
from scipy.stats import binomtest

from attnexp import chance


@pytest.mark.parametrize(
    ("accuracy", "n", "rate"), [(0.6667, 30, 0.5), (0.5, 30, 0.5), (0.9, 1000, 0.88), (0.55, 25000, 0.5), (0.3, 100, 0.1)]
)
def test_the_p_value_is_scipys_binomial_test(accuracy, n, rate):
    expected = binomtest(round(accuracy * n), n, rate, alternative="greater").pvalue
    assert chance.above_chance_p(accuracy, n, rate) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_near_chance_and_the_majority_rate():
    assert chance.majority_rate({"0": 30, "1": 10}, 2) == 0.75 and chance.majority_rate({}, 4) == 0.25
    assert chance.near_chance(0.76, 40, 0.75) and not chance.near_chance(0.95, 40, 0.75)
    assert not chance.near_chance(0.5, 0, 0.5)  # no test instances: nothing to flag
