"""Wiegreffe & Pinter tests: uniform baseline, frozen guides, consistent adversary, seed variance, lambda sweep."""

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from attnexp.analyses.divergences import LN2
from attnexp.analyses.wp.consistent_adversary import (
    AdversaryObjective,
    ConsistentAdversary,
    adversary_loss,
    adversary_terms,
    divergence_to_base,
    mean_objective,
    train_consistent_adversary,
)
from attnexp.analyses.wp.donors import (
    DonorTable,
    GuidedClassifier,
    donor_outputs,
    load_donor,
    load_guided_model,
    strip_zeros_alignment,
)
from attnexp.analyses.wp.seed_variance import attention_matrix, seed_variance
from attnexp.analyses.wp.settings import VARIANTS, WPSettings
from attnexp.config import PACKAGED_SCHEMA, ConfigError, validate_config
from attnexp.data.batching import collate, sequential_batches
from attnexp.datasets import vectors as known_vectors
from attnexp.datasets.acquire import file_digest
from attnexp.io import write_json, write_parquet
from attnexp.models.train import Classification, build_model, evaluation_batches, fit
from attnexp.paths import DONOR_FILES, RUN_FILES, in_folder
from attnexp.pipeline.settings import wp_settings as build_wp_settings
from tests.factories import train_settings, validated_config

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[3]
SCHEMA = PACKAGED_SCHEMA
MODEL_OPTIONS = validated_config()["model"]  # the schema's `model` options


@pytest.fixture(scope="module")
def tiny():
    """A tiny binary dataset in the preprocessed format: label 1 iff token 5 occurs."""
    rng = np.random.default_rng(0)
    rows = []
    for split, n in (("train", 96), ("dev", 24), ("test", 24)):
        for k in range(n):
            length = int(rng.integers(3, 12))
            words = rng.integers(6, 30, size=length)
            label = int(k % 2)
            if label:
                words[rng.integers(length)] = 5
            rows.append(
                {
                    "instance_id": f"tiny/{split}{k}",
                    "split": split,
                    "tokens": [2, *words.tolist(), 3],
                    "label": label,
                    "length": length,
                    "rationale": [],
                }
            )
    frame = pd.DataFrame(rows)
    parts = [frame[frame.split == "train"]] + [
        frame[frame.split == s].sort_values("length", kind="stable") for s in ("dev", "test")
    ]
    meta = {"task": "bc", "classes": ["0", "1"], "vocab": [str(i) for i in range(30)]}
    return pd.concat(parts, ignore_index=True), meta


def run_files(folder: Path) -> dict[str, str]:
    """A W&P run's named files (paths.wp_run_files) inside `folder`."""
    return in_folder(str(folder), {**RUN_FILES, **DONOR_FILES})


def write_data(folder: Path, instances: pd.DataFrame, meta: dict, comparable: bool = False) -> tuple[Path, Path]:
    """The preprocessed files (instances.parquet, meta.json) of a tiny dataset."""
    write_parquet(folder / "instances.parquet", instances)
    write_json(folder / "meta.json", {**meta, "options": {"vocab_fit_on": "train"}, "comparable": comparable})
    return folder / "instances.parquet", folder / "meta.json"


def small(meta, variant):
    encoder, attention = VARIANTS[variant]
    return build_model(meta, encoder, "uniform" if attention == "guide" else attention, embedding_dim=8, hidden_size=8)


def test_uniform_attention_is_exactly_one_over_n_without_attention_parameters(tiny):
    instances, meta = tiny
    model = small(meta, "uniform")
    assert model.parameter_groups()["attention"] == []
    assert not any("attention" in name for name, _ in model.named_parameters())
    batch = collate(instances.iloc[:40])
    attention = model(batch).attention
    n = (batch.lengths - 2).float()[:, None].expand_as(attention)
    expected = torch.where(batch.real_mask, 1.0 / n, torch.zeros_like(attention))
    assert torch.equal(attention, expected)


def test_frozen_guide_attention_equals_its_guide_for_every_instance(tiny):
    instances, meta = tiny
    rng = np.random.default_rng(1)
    guides = {i: rng.dirichlet(np.ones(n)) for i, n in zip(instances.instance_id, instances.length, strict=True)}
    shuffled = list(guides)
    rng.shuffle(shuffled)
    table = pd.DataFrame({"instance_id": shuffled, "attention": [guides[i].tolist() for i in shuffled]})
    model = GuidedClassifier(small(meta, "mlp_base").config, load_donor(table, name="test guide"))
    assert model.parameter_groups()["attention"] == []
    result = fit(model, instances, train_settings(1, 16, seed=0), Classification(first_epoch_eligible=True), lambda _: None)
    _, stored = donor_outputs(result.model, instances.sample(frac=1.0, random_state=3))
    for instance_id, weights in zip(stored.instance_id, stored.attention, strict=True):
        np.testing.assert_allclose(weights, guides[instance_id], rtol=1e-6, atol=1e-7)


def test_guide_mismatch_is_a_hard_error(tiny):
    instances, _ = tiny
    batch = collate(instances.iloc[:4])
    wrong_length = DonorTable({i: np.ones(n + 1) / (n + 1) for i, n in zip(instances.instance_id, instances.length, strict=True)})
    with pytest.raises(ValueError, match="guide length"):
        wrong_length.attention_for(batch)
    with pytest.raises(KeyError, match="instance_id"):
        DonorTable({}).attention_for(batch)


def test_strip_zeros_alignment_recovers_weights_by_position_and_breaks_on_underflow():
    table = pd.DataFrame({"instance_id": ["a", "b"], "attention": [[0.5, 0.5], [0.2, 0.3, 0.5]]})
    aligned = strip_zeros_alignment(table, ["x", "y"])
    np.testing.assert_array_equal(aligned["y"], [0.2, 0.3, 0.5])
    underflow = pd.DataFrame({"instance_id": ["a"], "attention": [[1.0, 0.0]]})
    assert len(strip_zeros_alignment(underflow, ["a"])["a"]) == 1


@pytest.fixture(scope="module")
def base_run(tiny):
    instances, meta = tiny
    model = small(meta, "base")
    fit(model, instances, train_settings(2, 16, seed=10), Classification(first_epoch_eligible=True), lambda _: None)
    predictions, attention = donor_outputs(model, instances)
    return model, predictions, attention


def test_adversarial_loss_decreases_and_divergences_are_per_instance(tiny, base_run):
    instances, meta = tiny
    _, predictions, attention = base_run
    base = DonorTable.from_frames(attention, predictions, "base")
    adversary = small(meta, "base")
    objective = AdversaryObjective(lam=0.5, max_epochs=4, patience=4)
    result = train_consistent_adversary(
        adversary, instances, base, train_settings(1, 16, seed=10), objective, progress=lambda _: None
    )
    history = result.history
    assert np.isfinite(history[["objective", "tvd", "kl"]].to_numpy()).all()
    assert history["objective"].iloc[-1] < history["objective"].iloc[0]
    assert history["objective"].min() == history.loc[history.kept, "objective"].iloc[-1]

    batch = collate(instances.iloc[:8])
    tvd, kl = adversary_terms(adversary, batch, base)
    assert tvd.shape == kl.shape == (8,)
    loss = adversary_loss(tvd, kl, 0.5)
    loss.backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in adversary.attention.parameters())

    test = instances[instances.split == "test"]
    adv_predictions, adv_attention = donor_outputs(adversary, test)
    ids = list(test.instance_id)
    base_p = predictions.set_index("instance_id").loc[ids, "p"].to_numpy()
    adv_p = adv_predictions.set_index("instance_id").loc[ids, "p"].to_numpy()
    tvd, divergence = divergence_to_base(base_p, attention_matrix(attention, ids), adv_p, attention_matrix(adv_attention, ids))
    assert tvd.shape == divergence.shape == (len(ids),)
    np.testing.assert_allclose(tvd, np.abs(adv_p - base_p), rtol=1e-6)
    assert (divergence >= -1e-9).all() and (divergence <= LN2 + 1e-9).all()
    half, _ = divergence_to_base(base_p, attention_matrix(attention, ids), adv_p, attention_matrix(adv_attention, ids), "half")
    np.testing.assert_allclose(half, tvd / 2, rtol=1e-6)


def test_lambda_zero_adversary_only_fits_the_base_predictions(tiny, base_run):
    instances, meta = tiny
    _, predictions, attention = base_run
    base = DonorTable.from_frames(attention, predictions, "base")
    model = small(meta, "base")
    batch = collate(instances.iloc[:8])
    tvd, kl = adversary_terms(model, batch, base)
    assert torch.allclose(adversary_loss(tvd, kl, 0.0), tvd.sum())


class RowOrderAdversary(ConsistentAdversary):
    """The objective as it was: each epoch evaluates the train rows in the split's own order (batches padded to
    their longest row) and looks the base's targets up batch by batch."""

    def start(self, model, instances, train_rows, settings) -> None:
        super().start(model, instances, train_rows, settings)
        self.train_batches, self.train_targets = evaluation_batches(train_rows, settings.device), None


def test_the_length_sorted_objective_selects_as_the_row_order_one():
    """The adversary's epoch objective over length-sorted train batches with pre-gathered targets equals the
    row-order one (several evaluation batches of 128, lengths 1-30 in no order) up to float rounding."""
    rng = np.random.default_rng(5)
    rows = []
    for split, n in (("train", 400), ("dev", 8), ("test", 24)):
        for k in range(n):
            length = int(rng.integers(1, 31))
            rows.append(
                {
                    "instance_id": f"mixed/{split}{k}",
                    "split": split,
                    "tokens": [2, *rng.integers(6, 30, size=length).tolist(), 3],
                    "label": int(k % 2),
                    "length": length,
                    "rationale": [],
                }
            )
    instances = pd.DataFrame(rows)
    meta = {"task": "bc", "classes": ["0", "1"], "vocab": [str(i) for i in range(30)]}
    donor = small(meta, "base")
    fit(donor, instances, train_settings(1, 16, seed=3), Classification(first_epoch_eligible=True), lambda _: None)
    predictions, attention = donor_outputs(donor, instances)
    base = DonorTable.from_frames(attention, predictions, "base")
    objective = AdversaryObjective(lam=0.5, max_epochs=3, patience=3)
    runs = {}
    for name, adversary in (("sorted", ConsistentAdversary(objective, base)), ("rows", RowOrderAdversary(objective, base))):
        model = build_model(meta, *VARIANTS["base"], embedding_dim=8, hidden_size=8, seed=10)  # the same start
        result = fit(model, instances, train_settings(3, 16, seed=10), adversary, lambda _: None)
        runs[name] = adversary, result
    padded = {name: sum(b.tokens.numel() for b in adversary.train_batches) for name, (adversary, _) in runs.items()}
    assert padded["sorted"] < padded["rows"]  # the two objectives saw differently padded batches
    new, old = runs["sorted"][1], runs["rows"][1]
    columns = ["objective", "tvd", "kl"]
    np.testing.assert_allclose(new.history[columns].to_numpy(), old.history[columns].to_numpy(), rtol=1e-5, atol=1e-7)
    assert list(new.history["kept"]) == list(old.history["kept"]) and new.best_epoch == old.best_epoch
    train = instances[instances.split == "train"]
    direct = mean_objective(new.model, train, base, objective)  # sorted inside, targets looked up per batch
    in_rows = mean_objective(new.model, train, base, objective, batches=evaluation_batches(train))
    assert direct == pytest.approx(in_rows, rel=1e-5, abs=1e-7)
    assert direct["objective"] == pytest.approx(new.history.loc[new.best_epoch - 1, "objective"], rel=1e-5, abs=1e-7)


def test_seed_variance_of_a_model_with_itself_is_zero(tiny, base_run):
    instances, _ = tiny
    _, predictions, attention = base_run
    test_ids = list(instances[instances.split == "test"].instance_id)
    p = predictions.set_index("instance_id").loc[test_ids, "p"].to_numpy()
    weights = attention_matrix(attention, test_ids)
    frame = seed_variance(p, weights, np.stack([p, p]), np.stack([weights, weights]))
    assert np.abs(frame["attn_diff"].to_numpy()).max() < 1e-7
    assert np.abs(frame["y_diff"].to_numpy()).max() == 0
    np.testing.assert_allclose(frame["max_attn"], weights.max(axis=1))
    other = seed_variance(p, weights, np.stack([1 - p]), np.stack([weights[::-1]]))
    assert other["attn_diff"].max() > 0


def test_donor_outputs_store_real_tokens_in_row_order(tiny, base_run):
    instances, _ = tiny
    model, _, _ = base_run
    rows = instances.iloc[:20]
    predictions, attention = donor_outputs(model, rows)
    assert list(attention.instance_id) == list(rows.instance_id) == list(predictions.instance_id)
    assert [len(a) for a in attention.attention] == list(rows.length)
    np.testing.assert_allclose([sum(a) for a in attention.attention], 1.0, rtol=1e-5)
    batch = sequential_batches(rows, 64)[0]
    np.testing.assert_allclose(predictions.p, torch.sigmoid(model(batch).logits).detach().numpy(), rtol=1e-6)


def test_donor_outputs_run_shortest_first_and_return_the_rows_order(tiny, base_run):
    """A train split is not length-sorted: the donor outputs run its rows shortest first (each batch a stretch of like
    lengths) and still return them in the rows' own order, each equal to the instance run alone."""
    instances, _ = tiny
    model, _, _ = base_run
    rows = instances.iloc[:24].sample(frac=1.0, random_state=7)
    seen = []
    handle = model.register_forward_pre_hook(lambda module, args: seen.append(args[0].lengths.tolist()))
    try:
        predictions, attention = donor_outputs(model, rows, batch_size=4)
    finally:
        handle.remove()
    flat = [n for lengths in seen for n in lengths]
    assert flat == sorted(flat) and len(seen) == 6  # shortest first, in batches of 4
    assert list(predictions.instance_id) == list(rows.instance_id) == list(attention.instance_id)
    for k in (0, 11, 23):
        alone = model(sequential_batches(rows.iloc[k : k + 1], 1)[0])
        assert predictions.p.iloc[k] == pytest.approx(float(torch.sigmoid(alone.logits)[0]), rel=1e-5)
        np.testing.assert_allclose(attention.attention.iloc[k], alone.attention[0, 1:-1].detach().numpy(), rtol=1e-5)


def _config(**wp):
    import yaml

    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["wp"].update(wp)
    return config


def wp_settings(**wp) -> WPSettings:
    return build_wp_settings(validate_config(_config(**wp), SCHEMA))


def wp_run_settings(settings: WPSettings, hyperparameters: dict, embeddings: dict):
    """variant -> the settings of one W&P run of the tiny dataset (seed 10, one epoch, default model options)."""
    from attnexp.pipeline.settings import WPRunSettings

    fit = train_settings(hyperparameters["epochs"], hyperparameters["batch_size"], seed=10, paper="wp")
    return lambda variant: WPRunSettings(
        dataset="tiny",
        variant=variant,
        seed=10,
        lam=None,
        wp=settings,
        hyperparameters=hyperparameters,
        model=MODEL_OPTIONS,
        embeddings=embeddings,
        fit=fit,
    )


def guide_files(donor: dict) -> dict:
    """A guided run's extra inputs: the donor run's stored attention per split."""
    return {key: path for key, path in donor.items() if key.endswith("_attention")}


def test_wp_config_rejects_non_binary_datasets_and_fills_defaults():
    with pytest.raises(ConfigError, match="binary"):
        validate_config(_config(datasets=["syn_nli"]), SCHEMA)
    with pytest.raises(ConfigError, match="tvd_binary"):
        validate_config(_config(tvd_binary="quarter"), SCHEMA)
    config = _config()
    del config["wp"]
    validated = validate_config(config, SCHEMA)
    assert validated["wp"]["adversary"] == {"max_epochs": 80, "patience": 10} and validated["wp"]["datasets"] == []


def test_lambda_sweep_expands_to_the_configured_values_in_a_dry_run(tmp_path):
    import yaml

    lambdas = [0.003, 0.5, 2]
    config = _config(lambdas={"default": lambdas}, diag_adv_lambda={"default": 0.5})
    config.update(datasets=["syn_sentiment"], encoders=["average"], attentions=["tanh"])
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    from tests.workflow.helpers import local_env

    env = local_env()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "--quiet",
            "host",  # list every job (the default profile's `quiet: [rules, host]` shows counts only)
            "--configfile",
            str(tmp_path / "config.yaml"),
            "--directory",
            str(tmp_path),
            "--snakefile",
            str(ROOT / "Snakefile"),
            "--cores",
            "1",
            "wp_adversarial",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    output = result.stdout + result.stderr
    swept = {float(x) for x in re.findall(r"adversarial/seed10/lambda([0-9.e+-]+)/metrics\.json", output)}
    assert swept == set(lambdas)


def test_wp_base_model_equals_the_jw_lstm_tanh_model_with_the_same_vectors_and_seed(tiny, tmp_path, monkeypatch):
    """W&P §9: the base model is J&W lstm+tanh: with the configured word vectors, the same seed and one epoch
    (J&W keeps the last epoch, W&P the first eligible: the same one) the weights are identical, and the run
    configs differ only in selection and the W&P flags; the Test-3 MLP starts from the same vectors."""
    import yaml

    import attnexp.models.train
    from attnexp.models.checkpoint import load_model
    from attnexp.pipeline.settings import TrainSettings
    from attnexp.pipeline.train import run_train
    from attnexp.pipeline.wp import run_wp_train

    instances, meta = tiny
    data = tmp_path / "data"
    write_data(data, instances, meta, comparable=True)
    rng = np.random.default_rng(1)
    vectors = tmp_path / "vectors.vec"
    words = [str(w) for w in range(5, 30, 2)]
    vectors.write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in rng.normal(size=8))}\n" for w in words))
    # the file stands for the paper's: its SHA-1 is made the official one, so the runs are comparable
    paper = replace(known_vectors.PAPER_VECTORS["fasttext_simple"], sha1=file_digest(vectors, "sha1"))
    monkeypatch.setitem(known_vectors.PAPER_VECTORS, "fasttext_simple", paper)
    embeddings = {"source": "fasttext_simple", "path": str(vectors), "missing": "zero"}
    hyperparameters = {"epochs": 1, "batch_size": 32, "embedding_dim": 8, "hidden_size": 8}
    inputs = {"instances": data / "instances.parquet", "meta": data / "meta.json"}
    jw_out = {k: tmp_path / "jw" / k for k in ("model", "history", "config", "metrics")}
    jw_settings = TrainSettings(
        dataset="tiny",
        encoder="lstm",
        attention="tanh",
        seed=10,
        hyperparameters=hyperparameters,
        model=MODEL_OPTIONS,
        embeddings=embeddings,
        fit=train_settings(1, 32, seed=10),
    )
    run_train(inputs=inputs, outputs=jw_out, settings=jw_settings)
    settings = wp_settings()
    run = wp_run_settings(settings, hyperparameters, embeddings)
    wp_out = run_files(tmp_path / "wp")
    run_wp_train(inputs=inputs, outputs=wp_out, settings=run("base"))
    jw_config = yaml.safe_load(jw_out["config"].read_text())
    wp_config = yaml.safe_load(Path(wp_out["config"]).read_text())
    differing = {k for k in jw_config.keys() | wp_config.keys() if jw_config.get(k) != wp_config.get(k)}
    assert differing == {"model_selection", "variant", "wp"}
    assert wp_config["embeddings"] == f"fasttext_simple:{vectors}" and wp_config["comparable"] is True
    assert wp_config["vectors"]["name"] == "fasttext-wiki-simple-300d" and wp_config["vectors"]["official"] is True
    assert wp_config["model_selection"] == {"split": settings.select_on, "first_epoch_eligible": True}
    assert (wp_config["encoder"], wp_config["attention"]) == ("lstm", "tanh")
    jw_state, wp_state = load_model(jw_out["model"]).state_dict(), load_model(wp_out["model"]).state_dict()
    assert jw_state.keys() == wp_state.keys()
    for name in jw_state:
        torch.testing.assert_close(wp_state[name], jw_state[name], rtol=0, atol=0, msg=name)

    # the diagnostic MLP (Test 3) is initialised from the same vectors; a missing vector file is non-comparable
    initial = {}

    def recording_fit(model, *args, **kwargs):
        initial["embedding"] = model.embed(torch.arange(30)).detach().clone()
        return real_fit(model, *args, **kwargs)

    real_fit = attnexp.models.train.fit
    monkeypatch.setattr(attnexp.models.train, "fit", recording_fit)  # the job imports `fit` when it runs
    run_wp_train(inputs={**inputs, **guide_files(wp_out)}, outputs=run_files(tmp_path / "mlp"), settings=run("mlp_base"))
    assert "embedding" in initial
    expected = torch.zeros(30, 8)
    for line in vectors.read_text().splitlines():
        word, *values = line.split()
        expected[int(word)] = torch.tensor([float(v) for v in values])
    torch.testing.assert_close(initial["embedding"], expected)
    monkeypatch.setattr(attnexp.models.train, "fit", real_fit)
    missing = run_files(tmp_path / "missing")
    no_vectors = wp_run_settings(settings, hyperparameters, {**embeddings, "path": None})
    run_wp_train(inputs=inputs, outputs=missing, settings=no_vectors("uniform"))
    missing_config = yaml.safe_load(Path(missing["config"]).read_text())
    assert missing_config["embeddings"] == "random" and missing_config["comparable"] is False
    assert missing_config["vectors"] is None


@pytest.mark.parametrize("tvd_binary, factor", [("full", 1.0), ("half", 0.5)])
def test_jsd_tvd_points_apply_tvd_binary_to_every_point_the_jw_adversary_included(tvd_binary, factor):
    """W&P figure 3 quirk `wp.tvd_binary: half`: the J&W per-instance adversary's TVD is halved like the others'."""
    from attnexp.analyses.wp.jsd_tvd import jsd_tvd_points

    ids, rng = ["a", "b", "c"], np.random.default_rng(0)
    base_p = np.array([0.9, 0.2, 0.6])

    def run(p):
        predictions = pd.DataFrame({"instance_id": ids, "p": p, "pred_class": (p > 0.5).astype(int)})
        attention = [rng.dirichlet(np.ones(n)).tolist() for n in (2, 3, 4)]
        return predictions, pd.DataFrame({"instance_id": ids, "attention": attention})

    base, other = run(base_p), run(np.array([0.7, 0.4, 0.6]))
    adversarial_p = [[0.95, 0.15, 0.5], [0.8, 0.3, 0.65]]  # two runs
    jw_adversary = pd.DataFrame(
        {
            "instance_id": ids * 2,
            "run": [0] * 3 + [1] * 3,
            "emax_jsd": rng.random(6),
            "emax_tvd": np.abs(np.ravel(adversarial_p) - np.tile(base_p, 2)),
            "adversarial_output": [[1 - p, p] for p in np.ravel(adversarial_p)],
            "original_output": [[1 - p, p] for p in np.tile(base_p, 2)],
        }
    )
    points = jsd_tvd_points("d", base, [(1, base)], other, [], [], tvd_binary, "mean", jw_adversary)
    by_model = points.set_index("model")
    expected = factor * np.mean([np.mean(np.abs(np.array(p) - base_p)) for p in adversarial_p])
    assert by_model.loc["jw_adversary", "tvd"] == pytest.approx(expected)
    assert by_model.loc["uniform", "tvd"] == pytest.approx(factor * np.mean(np.abs([0.2, 0.2, 0.0])))


def test_a_reloaded_guided_model_predicts_as_the_trained_one(tiny, tmp_path):
    """W&P §3.3: the guided MLP's checkpoint comes back as a GuidedClassifier with its guides, not as a plain
    uniform-attention model; its predictions equal those the run stored."""
    from attnexp.pipeline.wp import run_wp_train

    instances, meta = tiny
    data = write_data(tmp_path / "data", instances, meta)
    inputs = {"instances": data[0], "meta": data[1]}
    run = wp_run_settings(wp_settings(), {"epochs": 1, "batch_size": 32, "embedding_dim": 8, "hidden_size": 8}, {})
    base, guided = run_files(tmp_path / "base"), run_files(tmp_path / "mlp_base")
    run_wp_train(inputs=inputs, outputs=base, settings=run("base"))
    run_wp_train(inputs={**inputs, **guide_files(base)}, outputs=guided, settings=run("mlp_base"))

    model = load_guided_model(guided["model"], base)
    assert isinstance(model, GuidedClassifier) and model.checkpoint_kind == "guided"
    test = instances[instances.split == "test"]
    predictions, attention = donor_outputs(model, test)
    stored = pd.read_parquet(guided["test_predictions"])
    pd.testing.assert_frame_equal(predictions, stored)
    pd.testing.assert_frame_equal(attention, pd.read_parquet(guided["test_attention"]))
    pd.testing.assert_frame_equal(
        attention, pd.read_parquet(base["test_attention"]).set_index("instance_id").loc[list(test.instance_id)].reset_index()
    )
    with pytest.raises(ValueError, match="not a guided"):
        load_guided_model(base["model"], base)


def test_the_epoch_time_benchmark_imports():
    """benchmarks/wp_epoch_times.py once died on import (it used a helper that had been removed)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("wp_epoch_times", ROOT / "benchmarks/wp_epoch_times.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.main)


def test_adversary_variance_compares_the_sampled_instances_alone():
    """With `analyses.test_sample`, J&W's adversary on the W&P base model covers a sample of the test split: the
    variance table compares those instances (in the base run's order) instead of failing on the others."""
    from attnexp.analyses.wp.seed_variance import variance_table

    ids, rng = ["a", "b", "c", "d"], np.random.default_rng(0)
    p = np.array([0.9, 0.2, 0.6, 0.3])
    attention = [rng.dirichlet(np.ones(n)).tolist() for n in (2, 3, 4, 5)]
    base = (
        pd.DataFrame({"instance_id": ids, "p": p, "pred_class": (p > 0.5).astype(int)}),
        pd.DataFrame({"instance_id": ids, "attention": attention}),
    )
    sampled = ["d", "b"]  # the adversary's rows, in another order
    compared = (
        pd.DataFrame({"instance_id": sampled, "p": [0.5, 0.5]}),
        pd.DataFrame({"instance_id": sampled, "attention": [attention[3][::-1], attention[1][::-1]]}),
    )
    frame = variance_table(base, [compared], "script")
    assert list(frame["instance_id"]) == ["b", "d"]
    assert frame["y_diff"].to_numpy() == pytest.approx([0.3, 0.2])
