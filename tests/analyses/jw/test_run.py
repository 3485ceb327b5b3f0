"""One trained planted-rationale model through `run_analyses`: the contract files, and LOO finds the cues."""

import numpy as np
import pandas as pd
import pytest
import torch

from attnexp.analyses.jw.run import run_analyses
from attnexp.data.preprocess import preprocess, write_preprocessed
from attnexp.datasets import get_dataset
from attnexp.datasets.generated.synthetic import write_planted_sentiment
from attnexp.models.train import build_model, fit
from tests.factories import train_settings

torch.set_num_threads(1)

NAMES = {
    "importance": "importance.parquet",
    "kendall": "kendall.parquet",
    "kendall_summary": "kendall_summary.csv",
    "permutation": "permutation.parquet",
    "adversary": "adversary.parquet",
    "rationale": "rationale_recovery.csv",
    "config": "analysis_config.yaml",
}
OPTIONS = {"permutations": 12, "ig_steps": 8, "adversary": {"candidates": 3, "steps": 30}}


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    raw = root / "raw"
    write_planted_sentiment(
        raw / "data.csv",
        seed=5,
        sizes={"train": 600, "dev": 80, "test": 40},
        vocab_size=60,
        min_len=6,
        max_len=14,
        zipf_exponent=1.1,
        max_cues=1,
        distractor_rate=0.0,
    )
    instances, meta = preprocess(get_dataset("syn_sentiment"), raw)
    write_preprocessed(instances, meta, root / "pre" / "instances.parquet", root / "pre" / "meta.json")
    model = build_model(meta, "lstm", "tanh", embedding_dim=32, hidden_size=32)
    model = fit(model, instances, train_settings(6, 32, seed=0), progress=lambda _: None).model
    from attnexp.models.checkpoint import save_model

    save_model(model, root / "model.pt")
    outputs = {key: root / "out" / name for key, name in NAMES.items()}
    labels = {"dataset": "syn_sentiment", "encoder": "lstm", "attention": "tanh", "seed": "0"}
    run_analyses(root / "model.pt", root / "pre", outputs, OPTIONS, 32, labels)
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


def test_leave_one_out_recovers_planted_cues_far_above_chance(analysed):
    outputs, _ = analysed
    recovery = pd.read_csv(outputs["rationale"]).set_index("measure")
    assert set(recovery.index) == {"attention", "gradient", "loo", "ig"}
    loo = recovery.loc["loo"]
    assert loo["precision_at_k"] > loo["chance_precision_at_k"] + 0.3
    assert loo["auc"] > 0.8


def test_same_seed_same_numbers(analysed, tmp_path):
    outputs, _ = analysed
    again = {key: tmp_path / name for key, name in NAMES.items()}
    labels = {"dataset": "syn_sentiment", "encoder": "lstm", "attention": "tanh", "seed": 0}
    run_analyses(
        outputs["importance"].parent.parent / "model.pt",
        outputs["importance"].parent.parent / "pre",
        again,
        {**OPTIONS, "permutations": 12},
        32,
        labels,
    )
    for key in ("importance", "permutation", "adversary"):
        pd.testing.assert_frame_equal(pd.read_parquet(outputs[key]), pd.read_parquet(again[key]))
