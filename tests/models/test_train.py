"""Training (J&W §5) through the one loop `fit`: every model learns the planted task; same seed, same numbers;
selection per objective (J&W never keep epoch 0, W&P may, the adversary stops on patience)."""

import itertools

import numpy as np
import pytest
import torch
import yaml

from attnexp.config import PACKAGED_SCHEMA
from attnexp.data.preprocess import split_frame
from attnexp.models.settings import JW_LEARNING_RATE, JW_WEIGHT_DECAY, FitSettings
from attnexp.models.train import Classification, build_model, fit
from attnexp.pipeline.settings import fit_settings
from tests.factories import train_settings


@pytest.mark.parametrize("encoder,attention", list(itertools.product(["lstm", "cnn", "average"], ["tanh", "dot"])))
def test_every_model_learns_the_planted_classification_task(planted_sentiment, encoder, attention):
    instances, meta = planted_sentiment
    model = build_model(meta, encoder, attention, embedding_dim=64, hidden_size=64, seed=0)
    result = fit(model, instances, train_settings(8, 32, seed=0), progress=lambda _: None)
    assert result.test_metrics["accuracy"] >= 0.95
    assert 1 < result.best_epoch <= 8  # 1-based; J&W never keep the first epoch
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


@pytest.mark.parametrize("dataset", ["planted_sentiment", "planted_nli"])
def test_fused_adam_takes_the_per_parameter_loops_steps(request, dataset):
    """`fused_adam`: the fused kernel and torch's loop (amsgrad, weight decay; BC's three optimisers, NLI's one) give
    the same weights after an epoch, up to float rounding, and not bit for bit (the switch does change the kernel)."""
    instances, meta = request.getfixturevalue(dataset)

    def weights(fused):
        model = build_model(meta, "lstm", "tanh", embedding_dim=16, hidden_size=16, seed=3)
        fit(model, instances, train_settings(1, 32, seed=3, fused_adam=fused), progress=lambda _: None)
        return model.state_dict()

    fused, loop = weights(True), weights(False)
    for name, value in loop.items():
        torch.testing.assert_close(fused[name], value, rtol=1e-4, atol=1e-5, msg=name)
    assert any(not torch.equal(fused[name], value) for name, value in loop.items())


def test_jw_never_keeps_epoch_0_and_keeps_the_last_epoch_when_none_improves(planted_sentiment):
    instances, meta = planted_sentiment
    model = build_model(meta, "average", "tanh", embedding_dim=8, hidden_size=8, seed=0)
    result = fit(model, instances, train_settings(1, 64, seed=0), progress=lambda _: None)
    assert result.history["kept"].tolist() == [False] and result.best_epoch == 1  # epochs count from 1
    assert result.test_metrics["best_epoch"] == 1 and "epochs_run" not in result.test_metrics
    assert list(result.history.columns) == ["epoch", "train_loss", "dev_roc_auc", "kept", "seconds"]


def test_wp_runs_may_keep_epoch_0(planted_sentiment):
    instances, meta = planted_sentiment
    model = build_model(meta, "average", "tanh", embedding_dim=8, hidden_size=8, seed=0)
    result = fit(model, instances, train_settings(1, 64, seed=0), Classification(first_epoch_eligible=True), lambda _: None)
    assert result.history["kept"].tolist() == [True] and result.best_epoch == 1


class Scripted:
    """An objective with given epoch scores (lower is better, like the W&P adversary) and a zero-gradient loss."""

    first_epoch_eligible, initial_best, finite_loss, name = True, 1e10, True, "scripted"

    def __init__(self, scores, patience, loss=0.0):
        self.scores, self.patience, self.value, self.states = list(scores), patience, loss, []

    def start(self, model, instances, train_rows, settings):
        self.epoch = 0

    def loss(self, model, batch):
        return model(batch).logits.sum() * 0.0 + self.value

    def evaluate(self, model, train_loss):
        self.states.append({k: v.clone() for k, v in model.state_dict().items()})
        score = self.scores[len(self.states) - 1]
        return score, {"score": score}

    @staticmethod
    def improves(score, best):
        return score < best

    def describe(self, columns):
        return f"score {columns['score']}"


def test_fit_stops_after_patience_epochs_without_improvement_and_restores_the_best(planted_sentiment):
    instances, meta = planted_sentiment
    model = build_model(meta, "average", "tanh", embedding_dim=8, hidden_size=8, seed=0)
    objective = Scripted([3.0, 2.0, 2.5, 2.7, 1.0], patience=2)
    lines = []
    result = fit(model, instances, train_settings(5, 64, seed=0), objective, lines.append)
    kept = [line for line in lines if "(kept)" in line]
    assert kept[-1].startswith(f"epoch {result.best_epoch}/5:")  # metrics.json and the log name the same epoch
    assert result.history["kept"].tolist() == [True, True, False, False]
    assert result.best_epoch == 2 and result.test_metrics["epochs_run"] == 4  # the second epoch, counted from 1
    assert result.history["epoch"].tolist() == [1, 2, 3, 4]  # train_log.csv counts as the log does
    assert all(torch.equal(v, objective.states[1][k]) for k, v in result.model.state_dict().items())


def test_a_non_finite_loss_is_an_error_when_the_objective_says_so(planted_sentiment):
    instances, meta = planted_sentiment
    model = build_model(meta, "average", "tanh", embedding_dim=8, hidden_size=8, seed=0)
    with pytest.raises(FloatingPointError, match="scripted loss is not finite in epoch 1"):
        fit(model, instances, train_settings(2, 64, seed=0), Scripted([1.0, 1.0], 1, loss=float("nan")), lambda _: None)


def test_the_adversary_objective_stops_on_patience(planted_sentiment, monkeypatch):
    from attnexp.analyses.wp.consistent_adversary import AdversaryObjective, ConsistentAdversary, train_consistent_adversary
    from attnexp.analyses.wp.donors import DonorTable, donor_outputs

    instances, meta = planted_sentiment
    base = build_model(meta, "average", "tanh", embedding_dim=8, hidden_size=8, seed=1)
    predictions, attention = donor_outputs(base, instances)
    scores = iter([0.5, 0.4, 0.45, 0.41, 0.1, 0.0])
    monkeypatch.setattr(ConsistentAdversary, "evaluate", lambda self, model, loss: (s := next(scores), {"objective": s}))
    monkeypatch.setattr(ConsistentAdversary, "describe", lambda self, columns: "")
    model = build_model(meta, "average", "tanh", embedding_dim=8, hidden_size=8, seed=2)
    objective = AdversaryObjective(lam=0.1, max_epochs=6, patience=2)
    table = DonorTable.from_frames(attention, predictions)
    result = train_consistent_adversary(model, instances, table, train_settings(1, 64, seed=0), objective, lambda _: None)
    assert result.history["kept"].tolist() == [True, True, False, False]
    assert result.test_metrics["epochs_run"] == 4 and result.test_metrics["best_epoch"] == 2


def test_train_settings_have_no_defaults_and_come_from_the_config():
    from dataclasses import MISSING, fields

    from tests.factories import validated_config

    assert all(f.default is MISSING and f.default_factory is MISSING for f in fields(FitSettings))
    assert "hyperparameters" in yaml.safe_load(PACKAGED_SCHEMA.read_text())["properties"]
    config = {**validated_config(), "model_selection": {"split": "test"}, "wp": {"select_on": "dev"}}
    config["az"] = {**config["az"], "train": {"epochs": 3, "batch_size": 4, "learning_rate": 0.5, "amsgrad": False}}
    hyperparameters = {"epochs": 7, "batch_size": 16, "embedding_dim": 8, "hidden_size": 8}
    device = config["device"]  # as configured ("auto" by default): the job resolves it where it runs
    assert device == "auto"
    jw = fit_settings(config, seed=1, paper="jw", hyperparameters=hyperparameters)
    assert jw == FitSettings(7, 16, 1, "test", True, JW_LEARNING_RATE, JW_WEIGHT_DECAY, device, True, True, True)
    assert fit_settings(config, seed=1, paper="wp", hyperparameters=hyperparameters).select_on == "dev"
    assert fit_settings(config, seed=2, paper="az") == FitSettings(3, 4, 2, "test", True, 0.5, 0.0, device, True, True, False)
    with pytest.raises(ValueError, match="hyperparameters"):
        fit_settings(config, seed=1, paper="jw")


def test_az_recipe_is_unweighted_cross_entropy_with_dev_accuracy_selection_from_epoch_0(planted_sentiment):
    """A&Z spec §2.1: cross-entropy, the best dev accuracy is kept (epoch 0 included), early stopping."""
    from attnexp.data.batching import collate
    from attnexp.models.train import CrossEntropy, az_objective, predict_distribution
    from tests.factories import validated_config

    instances, meta = planted_sentiment
    config = validated_config()
    assert (fit_settings(config, seed=0, paper="az").epochs, config["az"]["train"]["patience"]) == (20, 3)
    assert isinstance(az_objective("spec", 3), CrossEntropy) and type(az_objective("jw", 3)) is Classification
    model = build_model(meta, "average", "tanh", embedding_dim=8, hidden_size=8, seed=0)
    objective = az_objective("spec", 2)
    objective.start(model, instances, split_frame(instances, "train"), train_settings(1, 64))
    rows = split_frame(instances, "train").iloc[:40]
    rows = rows.assign(label=[1] * 30 + [0] * 10)  # imbalanced: class weights would change the loss
    batch = collate(rows)
    z = model(batch).logits
    two_class = torch.stack([torch.zeros_like(z), z], dim=-1)
    assert torch.isclose(objective.loss(model, batch), torch.nn.functional.cross_entropy(two_class, batch.labels))

    result = fit(model, instances, train_settings(2, 64, seed=0, paper="az"), objective, lambda _: None)
    assert list(result.history.columns) == ["epoch", "train_loss", "dev_accuracy", "kept", "seconds"]
    assert result.history["kept"].iloc[0] and result.best_epoch == 1 + int(result.history["dev_accuracy"].idxmax())
    dev = split_frame(instances, "dev")
    accuracy = (predict_distribution(result.model, dev).argmax(-1) == dev["label"].to_numpy()).mean()
    assert accuracy == result.history["dev_accuracy"].max()


def test_az_recipe_stops_after_patience_epochs_without_a_better_dev_accuracy(planted_sentiment, monkeypatch):
    from attnexp.models.train import CrossEntropy

    instances, meta = planted_sentiment
    scores = iter([0.5, 0.7, 0.6, 0.7, 0.9])
    monkeypatch.setattr(
        CrossEntropy, "evaluate", lambda self, model, loss: (s := next(scores), {"train_loss": loss, "dev_accuracy": s})
    )
    model = build_model(meta, "average", "tanh", embedding_dim=8, hidden_size=8, seed=0)
    result = fit(model, instances, train_settings(5, 64, seed=0, paper="az"), CrossEntropy(patience=2), lambda _: None)
    assert result.history["kept"].tolist() == [True, True, False, False]
    assert result.best_epoch == 2 and result.test_metrics["epochs_run"] == 4


def test_length_noise_sorts_by_the_sequence_length_with_markers(planted_sentiment, monkeypatch):
    """J&W §5 batching: the noise is drawn on L = n + 2 (the spec's sequence length, [SOS] and [EOS] included,
    as in the authors' code), not on the n real tokens."""
    import attnexp.models.train as train

    instances, meta = planted_sentiment
    instances = instances.groupby("split", sort=False).head(40)
    seen = []
    real = train.length_noise_batches
    monkeypatch.setattr(train, "length_noise_batches", lambda lengths, *a: seen.append(lengths) or real(lengths, *a))
    model = build_model(meta, "average", "tanh", embedding_dim=8, hidden_size=8, seed=0)
    fit(model, instances, train_settings(1, 64), progress=lambda _: None)
    expected = split_frame(instances, "train")["tokens"].map(len).to_numpy()
    assert (
        len(seen) == 1
        and np.array_equal(seen[0], expected)
        and np.array_equal(seen[0], split_frame(instances, "train")["length"] + 2)
    )


def test_a_long_epoch_writes_progress_between_its_epoch_lines(planted_sentiment, monkeypatch):
    """Issue 23: a job of minutes moves its log at least every 30 s (here every batch: the interval set to 0)."""
    import attnexp.runlog

    instances, meta = planted_sentiment
    model = build_model(meta, "average", "tanh", embedding_dim=8, hidden_size=8, seed=0)
    lines = []
    monkeypatch.setattr(attnexp.runlog, "PROGRESS_SECONDS", 0.0)
    fit(model, instances, train_settings(1, 32, seed=0), progress=lines.append)
    batches = -(-len(split_frame(instances, "train")) // 32)
    expected = [f"epoch 1/1: batch {b}/{batches}" for b in range(1, batches + 1)]
    assert [line.split(",")[0] for line in lines[:batches]] == expected
    assert lines[batches].startswith("epoch 1/1: loss")
    monkeypatch.setattr(attnexp.runlog, "PROGRESS_SECONDS", 3600.0)
    quiet = []
    fit(model, instances, train_settings(1, 32, seed=0), progress=quiet.append)
    assert not [line for line in quiet if "batch" in line]  # an epoch of seconds: its epoch line only
