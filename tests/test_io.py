"""Files users share and trust (issue 15): umask permissions, strict JSON, damaged files named with the fix,
flipped bytes caught by the recorded sha256, the same bytes for the same content."""

import json
import os
import stat

import matplotlib.pyplot as plt
import pandas as pd
import pytest
import torch

from attnexp import io, paths
from attnexp.errors import CorruptFileError
from attnexp.models.checkpoint import load_model, save_model, write_run
from attnexp.provenance import code_version
from attnexp.report.style import save_figure


@pytest.fixture()
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _tiny_model():
    from attnexp.models.classifier import AttentionClassifier, ModelConfig

    config = ModelConfig(
        vocab_size=12, embedding_dim=4, hidden_size=4, n_classes=2, encoder="average", attention="tanh", task="bc"
    )
    return AttentionClassifier(config)


def _flip_one_byte(path, offset=None):
    data = bytearray(path.read_bytes())
    offset = len(data) // 2 if offset is None else offset
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_written_files_follow_the_umask(tmp_path, umask_022):
    io.write_json(tmp_path / "a.json", {"x": 1})
    io.write_parquet(tmp_path / "b.parquet", pd.DataFrame({"x": [1]}))
    for name in ("a.json", "b.parquet", "b.parquet.sha256"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    os.umask(0o077)
    io.write_text(tmp_path / "private.txt", "x")
    assert stat.S_IMODE((tmp_path / "private.txt").stat().st_mode) == 0o600


def test_nan_metrics_are_written_as_null_with_the_reason(tmp_path):
    outputs = paths.in_folder(str(tmp_path), paths.RUN_FILES)
    history = pd.DataFrame({"epoch": [0], "train_loss": [1.0], "kept": [True], "seconds": [0.5]})
    write_run(outputs, _tiny_model(), history, {"seed": 0}, {"accuracy": 1.0, "roc_auc": float("nan"), "pr_auc": float("nan")})
    text = (tmp_path / "metrics.json").read_text()
    assert "NaN" not in text
    metrics = json.loads(text)
    assert metrics["roc_auc"] is None and metrics["pr_auc"] is None
    assert metrics["undefined_metrics"]["roc_auc"] == "the test set holds a single class"


def test_same_model_same_bytes_and_code_version_recorded(tmp_path):
    torch.manual_seed(0)
    model = _tiny_model()
    save_model(model, tmp_path / "a/model.pt", extra={"x": 1})
    save_model(model, tmp_path / "b/model.pt", extra={"x": 1})
    assert (tmp_path / "a/model.pt").read_bytes() == (tmp_path / "b/model.pt").read_bytes()
    version = code_version()
    assert set(version) == {"package", "commit", "dirty"} and version["package"]


def test_same_figure_same_pdf_bytes(tmp_path):
    for name in ("a", "b"):
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        save_figure(fig, paths.in_folder(str(tmp_path / name), {"pdf": "f.pdf", "png": "f.png"}))
    for name in ("f.pdf", "f.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_flipped_bytes_in_checkpoints_and_tables_are_caught(tmp_path):
    """Every single-byte flip at a spread of offsets: caught, with the file named and no unsafe advice."""
    save_model(_tiny_model(), tmp_path / "model.pt")
    io.write_parquet(tmp_path / "t.parquet", pd.DataFrame({"x": [0.25, 0.5]}))
    io.write_csv(tmp_path / "t.csv", pd.DataFrame({"x": [0.25, 0.5]}))
    readers = {"model.pt": load_model, "t.parquet": io.read_parquet, "t.csv": io.read_csv}
    caught = tried = 0
    for name, read in readers.items():
        path = tmp_path / name
        original = path.read_bytes()
        read(path)  # intact: reads
        for offset in range(0, len(original), max(1, len(original) // 7)):
            _flip_one_byte(path, offset)
            tried += 1
            with pytest.raises(CorruptFileError) as err:
                read(path)
            caught += 1
            assert str(path) in str(err.value) and "--forcerun" in str(err.value)
            assert "weights_only" not in str(err.value)
            path.write_bytes(original)
    assert caught == tried > 20


@pytest.mark.parametrize("name", ["model.pt", "metrics.json", "meta.json"])
def test_damaged_files_without_a_checksum_are_named(tmp_path, name):
    """Truncated or garbage files (no sidecar: written elsewhere or by older code) name the file and the fix."""
    path = tmp_path / name
    if name == "model.pt":
        save_model(_tiny_model(), path)
        path.write_bytes(path.read_bytes()[:100])
        paths_sidecar = tmp_path / paths.checksum_file(name)
        paths_sidecar.unlink()
        read = load_model
    else:
        path.write_text('{"accuracy": 0.5, ')
        read = io.read_json
    with pytest.raises(CorruptFileError) as err:
        read(path)
    assert str(path) in str(err.value) and "--forcerun" in str(err.value)
    assert "weights_only" not in str(err.value)
