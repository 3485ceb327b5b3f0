"""Training (J&W §5): every encoder x attention learns the planted task; same seed, same numbers."""

import itertools

import pytest

from attnexp.models.train import build_model, fit
from tests.factories import train_settings


@pytest.mark.parametrize("encoder,attention", list(itertools.product(["lstm", "cnn", "average"], ["tanh", "dot"])))
def test_every_model_learns_the_planted_classification_task(planted_sentiment, encoder, attention):
    instances, meta = planted_sentiment
    model = build_model(meta, encoder, attention, embedding_dim=64, hidden_size=64, seed=0)
    result = fit(model, instances, train_settings(8, 32, seed=0), progress=lambda _: None)
    assert result.test_metrics["accuracy"] >= 0.95
    assert 0 < result.best_epoch < 8
    assert len(result.history) == 8


def test_same_seed_gives_identical_metrics(planted_sentiment):
    instances, meta = planted_sentiment

    def run(seed):
        model = build_model(meta, "lstm", "tanh", embedding_dim=16, hidden_size=16, seed=seed)
        return fit(model, instances, train_settings(2, 32, seed=seed), progress=lambda _: None)

    first, second, other = run(1), run(1), run(2)
    assert first.test_metrics == second.test_metrics
    assert first.history["train_loss"].tolist() == second.history["train_loss"].tolist()
    assert first.history["train_loss"].tolist() != other.history["train_loss"].tolist()
