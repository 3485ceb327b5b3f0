"""Wiegreffe & Pinter tests: uniform baseline, frozen guides, consistent adversary, seed variance, lambda sweep."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from attnexp.analyses.divergences import LN2
from attnexp.analyses.wp.consistent_adversary import (
    AdversaryObjective,
    adversary_loss,
    adversary_terms,
    divergence_to_base,
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
from attnexp.config import ConfigError, validate_config
from attnexp.data.batching import collate, sequential_batches
from attnexp.io import write_json, write_parquet
from attnexp.models.train import Classification, build_model, fit
from attnexp.paths import DONOR_FILES, RUN_FILES, in_folder
from tests.factories import train_settings

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[3]
SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"


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


def write_data(folder: Path, instances: pd.DataFrame, meta: dict) -> tuple[Path, Path]:
    """The preprocessed files (instances.parquet, meta.json) of a tiny dataset."""
    write_parquet(folder / "instances.parquet", instances)
    write_json(folder / "meta.json", {**meta, "options": {"vocab_fit_on": "train"}, "comparable": False})
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


def _config(**wp):
    import yaml

    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["wp"].update(wp)
    return config


def wp_settings(**wp) -> WPSettings:
    return WPSettings.from_config(validate_config(_config(**wp), SCHEMA))


def test_wp_config_rejects_non_binary_datasets_and_fills_defaults():
    with pytest.raises(ConfigError, match="binary"):
        validate_config(_config(datasets=["syn_nli"]), ROOT / "workflow/schemas/config.schema.yaml")
    with pytest.raises(ConfigError, match="tvd_binary"):
        validate_config(_config(tvd_binary="quarter"), ROOT / "workflow/schemas/config.schema.yaml")
    config = _config()
    del config["wp"]
    validated = validate_config(config, ROOT / "workflow/schemas/config.schema.yaml")
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


def test_wp_base_model_differs_from_jw_lstm_tanh_only_in_selection_and_seed(tiny, tmp_path):
    """W&P §9: the base model is J&W lstm+tanh; only selection (first epoch eligible), seed and W&P flags differ."""
    import yaml

    from attnexp.analyses.wp.runs import run_wp_model
    from attnexp.models.train import run_training
    from tests.factories import train_settings

    instances, meta = tiny
    data = tmp_path / "data"
    write_data(data, instances, meta)
    hyperparameters = {"epochs": 1, "batch_size": 32, "embedding_dim": 8, "hidden_size": 8}
    jw_out = {k: tmp_path / "jw" / k for k in ("model", "history", "config", "metrics")}
    run_training(
        instances=data / "instances.parquet",
        meta=data / "meta.json",
        dataset="tiny",
        encoder="lstm",
        attention="tanh",
        hyperparameters=hyperparameters,
        model_options={},
        settings=train_settings(1, 32, seed=0),
        outputs=jw_out,
    )
    settings = wp_settings()
    wp_out = run_files(tmp_path / "wp")
    run_wp_model(
        instances=data / "instances.parquet",
        meta=data / "meta.json",
        dataset="tiny",
        variant="base",
        seed=10,
        settings=settings,
        hyperparameters=hyperparameters,
        model_options={},
        deterministic=True,
        outputs=wp_out,
    )
    jw_config = yaml.safe_load(jw_out["config"].read_text())
    wp_config = yaml.safe_load(Path(wp_out["config"]).read_text())
    differing = {k for k in jw_config.keys() | wp_config.keys() if jw_config.get(k) != wp_config.get(k)}
    assert differing == {"seed", "model_selection", "variant", "wp"}
    assert wp_config["model_selection"] == {"split": settings.select_on, "first_epoch_eligible": True}
    assert (wp_config["encoder"], wp_config["attention"]) == ("lstm", "tanh")


def test_a_reloaded_guided_model_predicts_as_the_trained_one(tiny, tmp_path):
    """W&P §3.3: the guided MLP's checkpoint comes back as a GuidedClassifier with its guides, not as a plain
    uniform-attention model; its predictions equal those the run stored."""
    from attnexp.analyses.wp.runs import run_wp_model

    instances, meta = tiny
    data = write_data(tmp_path / "data", instances, meta)
    common = dict(
        instances=data[0],
        meta=data[1],
        dataset="tiny",
        seed=10,
        settings=wp_settings(),
        hyperparameters={"epochs": 1, "batch_size": 32, "embedding_dim": 8, "hidden_size": 8},
        model_options={},
        deterministic=True,
    )
    base, guided = run_files(tmp_path / "base"), run_files(tmp_path / "mlp_base")
    run_wp_model(variant="base", outputs=base, **common)
    run_wp_model(variant="mlp_base", outputs=guided, guide_files=base, **common)

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
