"""Issue 37 §4 probe 5: meta.json, metrics.json and a run's config.yaml carry a sha256 sidecar, as the tables and
checkpoints do, and every reader verifies it. Before, an edited metrics.json moved Table 1's near-chance mark
unnoticed and a meta.json with its vocabulary cut ended training in a torch IndexError traceback; now each stops with
the file, that it was changed after it was written, and the command that rebuilds it."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from attnexp import io, paths, runsummary
from attnexp.data.preprocess import read_preprocessed, write_preprocessed
from attnexp.errors import CorruptFileError
from attnexp.models.checkpoint import write_run
from attnexp.models.classifier import AttentionClassifier, ModelConfig
from attnexp.pipeline.settings import TrainSettings
from attnexp.pipeline.train import run_train
from tests.factories import train_settings, validated_config


def _instances() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for split, count in (("train", 40), ("dev", 10), ("test", 10)):
        for k in range(count):
            label = k % 2
            words = rng.integers(4, 30, 6).tolist() + [4 + label]
            rows.append({"instance_id": f"{split}{k}", "split": split, "tokens": [2, *words, 3], "label": label, "length": 7})
    return pd.DataFrame(rows).assign(rationale=[[] for _ in rows])


META = {
    "dataset": "tiny",
    "task": "bc",
    "classes": ["neg", "pos"],
    "vocab": ["<PAD>", "<UNK>", "<SOS>", "<EOS>", *[f"w{i}" for i in range(26)]],
    "sizes": {"train": 40, "dev": 10, "test": 10},
    "class_counts": {"train": {"0": 20, "1": 20}, "test": {"0": 5, "1": 5}},
    "mean_length": 7.0,
    "options": {"vocab_fit_on": "train"},
    "comparable": False,
}


RECORDS = {"metrics": "metrics.json", "config": "config.yaml"}  # a run's, by their key in paths.RUN_FILES


def _written(tmp_path) -> dict[str, object]:
    """The three records as their jobs write them: a preprocessed dataset's meta.json, a run's metrics.json and
    config.yaml (`write_run`)."""
    write_preprocessed(_instances(), META, tmp_path / "data/instances.parquet", tmp_path / "data/meta.json")
    config = ModelConfig(len(META["vocab"]), 2, "bc", "average", "tanh", embedding_dim=4, hidden_size=4)
    history = pd.DataFrame({"epoch": [0], "train_loss": [1.0], "kept": [True], "seconds": [0.5]})
    outputs = paths.in_folder(str(tmp_path / "run"), paths.RUN_FILES)
    write_run(
        outputs,
        AttentionClassifier(config),
        history,
        {"dataset": "tiny", "seed": 0},
        {"accuracy": 0.55, "f1_positive": 0.5, "n": 10},
    )
    return {"meta.json": tmp_path / "data/meta.json", **{name: Path(outputs[key]) for key, name in RECORDS.items()}}


def _cut_vocabulary(text: str) -> str:
    meta = json.loads(text)
    return json.dumps({**meta, "vocab": meta["vocab"][:10]}, indent=2, sort_keys=True) + "\n"


EDITS = {  # what a hand edit does to each: all still valid JSON or YAML
    "meta.json": _cut_vocabulary,
    "metrics.json": lambda text: text.replace('"accuracy": 0.55', '"accuracy": 0.95'),
    "config.yaml": lambda text: text.replace("seed: 0", "seed: 1"),
}
READERS = {"meta.json": io.read_json, "metrics.json": io.read_json, "config.yaml": io.read_yaml}


def _assert_changed(err, path) -> None:
    message = str(err.value)
    assert str(path) in message and "changed after it was written" in message, message
    assert re.search(rf"`snakemake --cores 1 --forcerun {re.escape(str(path))}`", message), message


@pytest.mark.parametrize("name", list(EDITS))
def test_each_record_has_a_sidecar_and_an_edit_after_writing_is_refused(tmp_path, name):
    path = _written(tmp_path)[name]
    sidecar = path.with_name(path.name + ".sha256")
    assert sidecar.read_text() == f"{io.sha256(path)}  {path.name}\n"  # `sha256sum -c` reads it
    untouched = READERS[name](path)
    assert untouched == (json.loads(path.read_text()) if name.endswith(".json") else yaml.safe_load(path.read_text()))
    edited = EDITS[name](path.read_text())
    assert edited != path.read_text()
    path.write_text(edited)
    with pytest.raises(CorruptFileError) as err:
        READERS[name](path)
    _assert_changed(err, path)


def test_a_record_without_its_sidecar_is_refused(tmp_path):
    for path in _written(tmp_path).values():
        path.with_name(path.name + ".sha256").unlink()
        reader = io.read_yaml if path.suffix == ".yaml" else io.read_json
        with pytest.raises(CorruptFileError, match=rf"{re.escape(path.name)} has no checksum file .*--forcerun"):
            reader(path)


def test_training_on_a_meta_json_with_its_vocabulary_cut_names_the_file(tmp_path):
    """Before: the embedding had 10 rows for token ids up to 29, and training died in torch's IndexError."""
    files = _written(tmp_path)
    read_preprocessed(tmp_path / "data/instances.parquet", files["meta.json"])  # untouched: reads
    files["meta.json"].write_text(_cut_vocabulary(files["meta.json"].read_text()))
    settings = TrainSettings(
        dataset="tiny",
        encoder="average",
        attention="tanh",
        seed=0,
        hyperparameters={"epochs": 1, "batch_size": 8, "embedding_dim": 4, "hidden_size": 4},
        model=validated_config()["model"],
        embeddings={"source": "random"},
        fit=train_settings(1, 8),
    )
    inputs = {"instances": tmp_path / "data/instances.parquet", "meta": files["meta.json"]}
    outputs = paths.in_folder(str(tmp_path / "trained"), paths.RUN_FILES)
    with pytest.raises(CorruptFileError) as err:
        run_train(inputs=inputs, outputs=outputs, settings=settings)
    _assert_changed(err, files["meta.json"])


def test_table1_refuses_an_edited_metrics_json(tmp_path):
    from attnexp.report.jw.tables import build_table1

    files = _written(tmp_path)
    outputs = {fmt: tmp_path / f"table1.{fmt}" for fmt in ("csv", "md", "tex")}
    models = [{"dataset": "tiny", "encoder": "average", "attention": "tanh", "seed": 0}]
    kwargs = {"datasets": ["tiny"], "metas": [files["meta.json"]], "outputs": outputs, "models": models}
    build_table1(metrics=[files["metrics.json"]], **kwargs)  # untouched: builds
    files["metrics.json"].write_text(EDITS["metrics.json"](files["metrics.json"].read_text()))
    with pytest.raises(CorruptFileError) as err:
        build_table1(metrics=[files["metrics.json"]], **kwargs)
    _assert_changed(err, files["metrics.json"])


def test_the_run_summary_names_an_edited_metrics_json_instead_of_judging_it(tmp_path):
    """The closing summary's near-chance check reads metrics.json and meta.json: an edited one is not judged (an
    edit could hide a model at chance) but named, with the fix."""
    metrics = "results/models/d/lstm-tanh/seed0/metrics.json"
    io.write_json(tmp_path / "results/preprocessed/d/meta.json", {**META, "sizes": {"test": 100}})
    io.write_json(tmp_path / metrics, {"accuracy": 0.5, "n": 100})
    assert runsummary.chance_level_models(tmp_path, [metrics]) == ["d lstm-tanh seed 0 (0.50 vs 0.50)"]
    (tmp_path / metrics).write_text(json.dumps({"accuracy": 0.9, "n": 100}))
    changed: list[str] = []
    assert runsummary.chance_level_models(tmp_path, [metrics], changed) == []
    assert len(changed) == 1 and metrics in changed[0] and "changed after it was written" in changed[0], changed
