"""Checkpoints (both kinds, old ones without a kind, unknown kinds) and the one run writer."""

import json
from dataclasses import asdict

import pandas as pd
import pytest
import torch
import yaml

from attnexp import paths
from attnexp.data.batching import collate
from attnexp.data.preprocess import split_frame
from attnexp.io import to_bytes, write_bytes
from attnexp.models.checkpoint import load_model, save_model, write_run
from attnexp.models.classifier import AttentionClassifier
from attnexp.models.train import build_model
from attnexp.models.transformer import TransformerClassifier, build_transformer
from attnexp.provenance import code_version


def _models(meta):
    classifier = build_model(meta, "cnn", "dot", embedding_dim=12, hidden_size=8, cnn_filters=4, seed=0)
    torch.manual_seed(0)
    transformer = build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.1, max_length=64)
    return {"classifier": classifier, "transformer": transformer}


def _same_outputs(a, b, batch) -> bool:
    with torch.no_grad():
        return torch.equal(a.eval()(batch).logits, b.eval()(batch).logits)


@pytest.mark.parametrize("dataset", ["planted_sentiment", "planted_nli"])
def test_round_trip_of_both_kinds(request, dataset, tmp_path):
    instances, meta = request.getfixturevalue(dataset)
    batch = collate(split_frame(instances, "test").iloc[:6])
    for kind, model in _models(meta).items():
        save_model(model, tmp_path / f"{kind}.pt", extra={"run_config": {"seed": 0}})
        stored = torch.load(tmp_path / f"{kind}.pt", weights_only=True)
        assert stored["kind"] == kind and stored["extra"] == {"run_config": {"seed": 0}}
        loaded = load_model(tmp_path / f"{kind}.pt")
        assert type(loaded) is type(model) and loaded.config == model.config and not loaded.training
        assert _same_outputs(model, loaded, batch)


def test_checkpoints_without_a_kind_still_load(planted_sentiment, tmp_path):
    instances, meta = planted_sentiment
    batch = collate(split_frame(instances, "test").iloc[:6])
    for kind, model in _models(meta).items():
        old = {"config": asdict(model.config), "state_dict": model.state_dict(), "extra": {}}
        write_bytes(tmp_path / "old.pt", to_bytes(torch.save, old), checksum=True)  # a reader needs the sidecar
        loaded = load_model(tmp_path / "old.pt")
        assert isinstance(loaded, {"classifier": AttentionClassifier, "transformer": TransformerClassifier}[kind])
        assert _same_outputs(model, loaded, batch)


def test_an_unknown_kind_is_a_clear_error(planted_sentiment, tmp_path):
    model = _models(planted_sentiment[1])["classifier"]
    path = tmp_path / "guided.pt"
    guided = {"kind": "guided", "config": asdict(model.config), "state_dict": model.state_dict(), "extra": {}}
    write_bytes(path, to_bytes(torch.save, guided), checksum=True)
    with pytest.raises(ValueError, match=r"guided\.pt holds a 'guided' model.*attnexp\.analyses\.wp"):
        load_model(path)
    mystery = {"kind": "mystery", "config": asdict(model.config), "state_dict": {}, "extra": {}}
    write_bytes(path, to_bytes(torch.save, mystery), checksum=True)
    with pytest.raises(ValueError, match="'mystery' model.*the loader of the code that saved it"):
        load_model(path)


def test_write_run_writes_the_run_files(planted_sentiment, tmp_path):
    model = _models(planted_sentiment[1])["classifier"]
    outputs = paths.in_folder(str(tmp_path / "run"), paths.RUN_FILES)
    history = pd.DataFrame({"epoch": [0, 1], "train_loss": [2.5, 1.25], "kept": [False, True], "seconds": [0.1, 0.2]})
    run_config = {"seed": 0, "dataset": "syn_sentiment", "hyperparameters": {"epochs": 2}}
    metrics = {"seed": 0, "accuracy": 0.75, "best_epoch": 1}
    write_run(outputs, model, history, run_config, metrics)
    checksums = [paths.checksum_file(name) for name in paths.RUN_FILES.values()]  # every run file has its sidecar
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == sorted([*paths.RUN_FILES.values(), *checksums])
    assert (tmp_path / "run/metrics.json").read_text() == json.dumps(metrics, indent=2, sort_keys=True) + "\n"
    recorded = {**run_config, "threads": torch.get_num_threads(), "code_version": code_version()}
    assert yaml.safe_load((tmp_path / "run/config.yaml").read_text()) == recorded
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "run/train_log.csv"), history.drop(columns="seconds"))
    assert json.loads((tmp_path / "run/timings.json").read_text()) == {"seconds_per_epoch": [0.1, 0.2]}
    assert torch.load(outputs["model"], weights_only=True)["extra"] == {"run_config": recorded}
