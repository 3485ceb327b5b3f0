"""Chance level: whether a model's test accuracy is clearly above always predicting the test set's majority class.

A one-sided exact binomial test of the number of correct test predictions against the majority-class rate; a
model whose accuracy is not significantly above it (p > `ALPHA`) is "near chance", and Table 1 and the run's
closing summary say so. Pure Python (the closing summary runs where the jobs' stack may be absent)."""

import math
from collections.abc import Mapping

ALPHA = 0.05


def majority_rate(class_counts: Mapping[str, int], n_classes: int) -> float:
    """The share of the most frequent class (a constant predictor's accuracy); 1 / n_classes without counts."""
    total = sum(int(c) for c in class_counts.values())
    return max(int(c) for c in class_counts.values()) / total if total else 1.0 / max(n_classes, 1)


def above_chance_p(accuracy: float, n: int, rate: float) -> float:
    """P(X >= correct) for X ~ Binomial(n, rate): the one-sided p-value of `accuracy` on `n` instances."""
    correct = round(accuracy * n)
    if correct <= 0 or rate <= 0:
        return 1.0
    if rate >= 1:
        return 1.0 if correct >= n else 0.0
    log_terms = [
        math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(rate) + (n - k) * math.log1p(-rate)
        for k in range(correct, n + 1)
    ]
    top = max(log_terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in log_terms))


def near_chance(accuracy: float, n: int, rate: float, alpha: float = ALPHA) -> bool:
    """Whether `accuracy` on `n` test instances is not significantly above `rate` (one-sided, level `alpha`)."""
    return n > 0 and above_chance_p(accuracy, n, rate) > alpha
