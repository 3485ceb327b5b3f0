"""One trained planted-rationale model through the analyses job (`run_analyze`): the contract files, and LOO finds the cues; the
settings agree with the config schema."""

from dataclasses import MISSING, fields, replace

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from attnexp import paths
from attnexp.analyses.erasure.settings import ErasureSettings
from attnexp.analyses.jw.settings import AdversarySettings, AnalysisSettings, TestSample
from attnexp.config import PACKAGED_SCHEMA
from attnexp.data.preprocess import preprocess, write_preprocessed
from attnexp.datasets import get_dataset
from attnexp.models.train import build_model, fit
from attnexp.pipeline.jw import run_analyze
from attnexp.pipeline.plan import Plan
from attnexp.pipeline.settings import AnalyzeSettings, analysis_settings, erasure_settings
from tests.factories import synthetic_data, train_settings, validated_config

torch.set_num_threads(1)

OPTIONS = {"permutations": 12, "ig_steps": 8, "adversary": {"candidates": 3, "steps": 30}}
CONFIG = validated_config(analyses=OPTIONS)
SETTINGS = analysis_settings(CONFIG, batch_size=32)


def analyse(root, outputs, labels, settings=SETTINGS):
    """The analyses job on the model under `root`; `labels` as the workflow's wildcards give them (seed: a str)."""
    job = AnalyzeSettings.from_plan(
        Plan.from_config(CONFIG), labels["dataset"], labels["seed"], labels["encoder"], labels["attention"]
    )
    inputs = {"model": root / "model.pt", "instances": root / "pre" / "instances.parquet", "meta": root / "pre" / "meta.json"}
    run_analyze(inputs=inputs, outputs=outputs, settings=replace(job, analysis=settings))


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    raw = root / "raw"
    synthetic_data(
        "sentiment",
        raw,
        seed=5,
        sizes={"train": 600, "dev": 80, "test": 40},
        vocab_size=60,
        min_len=6,
        max_len=14,
        max_cues=1,
        distractor_rate=0.0,
    )
    instances, meta = preprocess(get_dataset("syn_sentiment"), raw)
    write_preprocessed(instances, meta, root / "pre" / "instances.parquet", root / "pre" / "meta.json")
    model = build_model(meta, "lstm", "tanh", embedding_dim=32, hidden_size=32)
    model = fit(model, instances, train_settings(6, 32, seed=0), progress=lambda _: None).model
    from attnexp.models.checkpoint import save_model

    save_model(model, root / "model.pt")
    outputs = {key: root / "out" / name for key, name in {**paths.ANALYSIS_FILES, **paths.ERASURE_FILES}.items()}
    analyse(root, outputs, {"dataset": "syn_sentiment", "encoder": "lstm", "attention": "tanh", "seed": "0"})
    return outputs, instances


def test_contract_files_and_columns(analysed):
    outputs, instances = analysed
    importance = pd.read_parquet(outputs["importance"])
    test = instances[instances["split"] == "test"]
    assert list(importance["instance_id"]) == list(test["instance_id"])
    assert list(importance.columns) == [
        "instance_id",
        "length",
        "label",
        "predicted",
        "max_attention",
        "attention",
        "gradient",
        "loo",
        "ig",
        "rationale",
    ]
    for column in ("attention", "gradient", "loo", "ig"):
        assert (importance[column].map(len) == importance["length"]).all()
    np.testing.assert_allclose(importance["attention"].map(sum), 1.0, atol=1e-5)
    kendall = pd.read_parquet(outputs["kendall"])
    assert set(kendall["pair"]) == {"attn_grad", "attn_loo", "grad_loo", "attn_ig", "ig_loo", "grad_ig"}
    assert set(kendall["method"]) <= {"exact", "asymptotic"}
    summary = pd.read_csv(outputs["kendall_summary"])
    assert set(summary["group"]) == {"Overall", "class 0", "class 1"}
    assert (summary["seed"] == 0).all()
    permutation = pd.read_parquet(outputs["permutation"])
    assert (permutation["output_changes"].map(len) == OPTIONS["permutations"]).all()
    adversary = pd.read_parquet(outputs["adversary"])
    assert (adversary["candidate_jsd"].map(len) == 3).all()
    assert (adversary["adversarial_attention"].map(len) == adversary["length"]).all()
    assert (adversary["emax_tvd"] <= 0.01 + 1e-7).all() and (adversary["emax_jsd"] <= np.log(2)).all()


def test_erasure_files_score_every_ranking_and_the_rationale_oracle(analysed):
    outputs, instances = analysed
    test = instances[instances["split"] == "test"]
    attention = pd.read_parquet(outputs["erasure_attention"])
    inputs = pd.read_parquet(outputs["erasure_input"])
    assert list(attention.columns) == [
        "instance_id", "ranking", "n", "first_flip_fraction", "jsd_top", "jsd_random", "flip_top", "flip_random",
        "tvd_top", "tvd_random",
    ]  # fmt: skip
    assert list(inputs.columns) == ["instance_id", "ranking", "k", "comprehensiveness", "sufficiency"]
    rankings = {"attention", "gradient", "loo", "ig", "random", "rationale"}
    assert set(inputs["ranking"]) == rankings
    assert set(attention["ranking"]) == rankings | {"attention_gradient", "attention_x_gradient"}
    assert set(inputs["k"]) == {0.01, 0.05, 0.1, 0.2, 0.5}
    assert (inputs.groupby("ranking")["instance_id"].nunique() == len(test)).all()  # every instance has a planted cue
    aopc = inputs.groupby("ranking")[["comprehensiveness", "sufficiency"]].mean()
    # the model reads its one planted cue: deleting the oracle's tokens moves the output more than random ones
    assert aopc.loc["rationale", "comprehensiveness"] > aopc.loc["random", "comprehensiveness"] + 0.1
    assert aopc.loc["rationale", "sufficiency"] < aopc.loc["random", "sufficiency"]
    recorded = yaml.safe_load(outputs["config"].read_text())
    assert recorded["erasure"]["bins"] == [0.01, 0.05, 0.1, 0.2, 0.5]


def test_leave_one_out_recovers_planted_cues_far_above_chance(analysed):
    outputs, _ = analysed
    recovery = pd.read_csv(outputs["rationale"]).set_index("measure")
    assert set(recovery.index) == {"attention", "gradient", "loo", "ig"}
    loo = recovery.loc["loo"]
    assert loo["precision_at_k"] > loo["chance_precision_at_k"] + 0.3
    assert loo["auc"] > 0.8


def test_same_seed_same_numbers(analysed, tmp_path):
    outputs, _ = analysed
    again = {key: tmp_path / name for key, name in {**paths.ANALYSIS_FILES, **paths.ERASURE_FILES}.items()}
    analyse(
        outputs["importance"].parent.parent,
        again,
        {"dataset": "syn_sentiment", "encoder": "lstm", "attention": "tanh", "seed": 0},
    )
    for key in {**paths.ANALYSIS_FILES, **paths.ERASURE_FILES}:
        assert again[key].read_bytes() == outputs[key].read_bytes(), key


def test_without_integrated_gradients_the_other_measures_are_unchanged(analysed, tmp_path):
    """`analyses.ig_steps: null`: the ig column is NaN and drops out of the tau pairs, the erasure rankings and the
    rationale table; every other measure is the same as with IG."""
    outputs, _ = analysed
    files = {key: tmp_path / file for key, file in {**paths.ANALYSIS_FILES, **paths.ERASURE_FILES}.items()}
    labels = {"dataset": "syn_sentiment", "encoder": "lstm", "attention": "tanh", "seed": "0"}
    analyse(outputs["importance"].parent.parent, files, labels, settings=replace(SETTINGS, ig_steps=None))
    with_ig, without = pd.read_parquet(outputs["importance"]), pd.read_parquet(files["importance"])
    assert without["ig"].map(lambda v: bool(pd.isna(v).all())).all()  # Parquet stores all-NaN lists as nulls
    pd.testing.assert_frame_equal(with_ig.drop(columns="ig"), without.drop(columns="ig"))
    assert set(pd.read_parquet(files["kendall"])["pair"]) == {"attn_grad", "attn_loo", "grad_loo"}
    assert "ig" not in set(pd.read_parquet(files["erasure_input"])["ranking"])
    assert "ig" not in set(pd.read_csv(files["rationale"])["measure"])
    for key in ("permutation", "adversary"):
        assert files[key].read_bytes() == outputs[key].read_bytes(), key
    assert yaml.safe_load(files["config"].read_text())["settings"]["ig_steps"] is None


def test_config_records_every_setting(analysed):
    outputs, _ = analysed
    recorded = yaml.safe_load(outputs["config"].read_text())
    assert recorded["settings"]["ig_steps"] == 8 and recorded["settings"]["adversary"]["steps"] == 30
    assert recorded["settings"]["memory_budget_mb"] == 256 and recorded["seed"] == 0


def test_a_test_sample_analyses_the_seeded_instances_in_the_split_order(analysed, tmp_path):
    """`analyses.test_sample`: every table of the job covers the same seeded sample, in the test split's order, and
    analysis_config.yaml records it; the same seed gives the same bytes."""
    outputs, instances = analysed
    sampled = replace(SETTINGS, test_sample=TestSample(n=15, seed=2))
    labels = {"dataset": "syn_sentiment", "encoder": "lstm", "attention": "tanh", "seed": "0"}
    runs = []
    for name in ("a", "b"):
        files = {key: tmp_path / name / file for key, file in {**paths.ANALYSIS_FILES, **paths.ERASURE_FILES}.items()}
        analyse(outputs["importance"].parent.parent, files, labels, settings=sampled)
        runs.append(files)
    test_ids = list(instances.loc[instances["split"] == "test", "instance_id"])
    ids = list(pd.read_parquet(runs[0]["importance"])["instance_id"])
    assert len(ids) == 15 and ids == [i for i in test_ids if i in set(ids)]
    for key in ("permutation", "adversary", "erasure_input"):
        assert set(pd.read_parquet(runs[0][key])["instance_id"]) == set(ids), key
    recorded = yaml.safe_load(runs[0]["config"].read_text())
    assert recorded["settings"]["test_sample"] == {"n": 15, "seed": 2}
    assert recorded["test_instances"] == {"analysed": 15, "of": len(test_ids)}
    assert yaml.safe_load(outputs["config"].read_text())["test_instances"] == {"analysed": len(test_ids), "of": len(test_ids)}
    for key in runs[0]:
        assert runs[0][key].read_bytes() == runs[1][key].read_bytes(), key


def test_settings_mirror_the_schema_without_defaults():
    """Every key of the schema's `analyses` section is a settings field with no default of its own."""
    section = yaml.safe_load(PACKAGED_SCHEMA.read_text())["properties"]["analyses"]["properties"]
    renamed = {"kendall": "nan_policy", "lambda": "lam"}  # nested or reserved config keys
    analysis = {f.name: f for f in fields(AnalysisSettings)}
    adversary = {f.name: f for f in fields(AdversarySettings)}
    for key in section:
        if key == "erasure":  # its own settings (attnexp.analyses.erasure.settings), in AnalyzeSettings
            continue
        field = analysis[renamed.get(key, key)]
        assert field.default is MISSING and field.default_factory is MISSING, key
    for key in section["adversary"]["properties"]:
        field = adversary[renamed.get(key, key)]
        assert field.default is MISSING, key
    erasure = {f.name for f in fields(ErasureSettings)}
    assert set(section["erasure"]["properties"]) - {"enabled"} <= erasure
    assert erasure_settings(validated_config()).bins == tuple(section["erasure"]["properties"]["bins"]["default"])
    assert erasure_settings(validated_config(analyses={"erasure": {"enabled": False}})) is None
    defaults = analysis_settings(validated_config(), batch_size=7)
    assert defaults.ig_steps == section["ig_steps"]["default"] and defaults.batch_size == 7
