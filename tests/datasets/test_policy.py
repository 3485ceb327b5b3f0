"""What the config decides for a dataset (attnexp.datasets.policy), and the layering of the datasets package."""

import copy
import subprocess
import sys

import pytest
import yaml

from attnexp import paths
from attnexp.config import ConfigError
from attnexp.datasets import DATASETS, get_dataset, policy
from attnexp.datasets.generated.synthetic import FAMILY_FILES
from tests.conftest import REPO


@pytest.fixture()
def data():
    """The default config's `data` section."""
    return copy.deepcopy(yaml.safe_load((REPO / "config/config.yaml").read_text())["data"])


def test_generated_datasets_are_always_available(data):
    data.update(raw_data_dir="/nonexistent", on_missing="fail")
    names = ["syn_sentiment", "syn_babi2"]
    assert policy.check_datasets_available(names, data, REPO) == names


def test_missing_raw_data_fails_naming_every_file(data, tmp_path):
    data.update(raw_data_dir=str(tmp_path), on_missing="fail")
    with pytest.raises(ConfigError) as err:
        policy.check_datasets_available(["syn_sentiment", "sst", "cnn"], data, REPO)
    message = str(err.value)
    assert "raw data missing for 2 dataset(s)" in message
    assert "sst/train.txt" in message and "data.user_files.cnn.train" in message


def test_missing_raw_data_is_skipped_with_a_message(data, tmp_path, capsys):
    data.update(raw_data_dir=str(tmp_path), on_missing="skip")
    assert policy.check_datasets_available(["syn_nli", "sst"], data, REPO) == ["syn_nli"]
    assert "Skipping 1 dataset(s)" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="no dataset in the grid"):
        policy.check_datasets_available(["sst"], data, REPO)


def test_raw_data_dir_must_be_a_directory(data, tmp_path):
    data["raw_data_dir"] = str(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match="is not a directory"):
        policy.check_datasets_available(["sst"], data, REPO)


def test_without_raw_data_dir_the_downloads_are_the_inputs(data):
    assert policy.raw_root(data, REPO) == paths.DOWNLOADED
    assert policy.raw_files(get_dataset("sst"), data, REPO) == {
        s: f"{paths.DOWNLOADED}/trees/{s}.txt" for s in ("train", "dev", "test")
    }
    assert policy.check_datasets_available(["sst", "syn_nli"], data, REPO) == ["sst", "syn_nli"]


def test_relative_raw_data_dir_is_resolved_against_the_basedir_and_stays_relative(data, monkeypatch):
    data["raw_data_dir"] = "raw"
    assert policy.raw_root(data, "/repo") == "/repo/raw"
    data["raw_data_dir"] = "./../shared//data/"  # the workflow's basedir is ".": relative and normalised
    assert policy.raw_root(data, ".") == "../shared/data"
    assert policy.raw_files(get_dataset("sst"), data, ".")["train"].startswith("../shared/data/")
    monkeypatch.setenv("ATTNEXP_RAW", "/data/raw")
    data["raw_data_dir"] = "$ATTNEXP_RAW"
    assert policy.raw_root(data, "/repo") == "/data/raw"


def test_generated_and_user_files(data):
    assert policy.raw_dir(get_dataset("syn_babi3"), data, REPO) == paths.SYNTHETIC.format(family="babi")
    assert policy.raw_files(get_dataset("syn_sentiment"), data, REPO) == {
        "data": f"{paths.SYNTHETIC.format(family='sentiment')}/data.csv"
    }
    babi = policy.raw_files(get_dataset("syn_babi3"), data, REPO)
    assert set(babi) == {"train", "test"} and all(p.startswith(paths.SYNTHETIC.format(family="babi")) for p in babi.values())
    data["user_files"]["adr"]["csv"] = "/somewhere/adr_dataset.csv"
    assert policy.raw_files(get_dataset("adr"), data, REPO) == {"csv": "/somewhere/adr_dataset.csv"}


def test_hyperparameters_are_registry_defaults_with_config_overrides():
    spec = get_dataset("syn_nli")
    assert policy.hyperparameters("syn_nli", {}) == {
        "epochs": spec.epochs,
        "batch_size": spec.batch_size,
        "embedding_dim": spec.embedding_dim,
        "hidden_size": spec.hidden_size,
    }
    assert policy.hyperparameters("syn_nli", {"syn_nli": {"epochs": 2}, "sst": {"epochs": 9}})["epochs"] == 2


def test_embeddings_follow_the_paper(data):
    assert policy.embeddings("syn_sentiment", data) == {}
    data["embeddings"]["mimic_w2v"] = "/vectors/mimic.txt"
    assert policy.embeddings("anemia", data) == {"source": "mimic_w2v", "path": "/vectors/mimic.txt", "missing": "normal"}
    assert policy.embeddings("sst", data) == {"source": "fasttext_simple", "path": None, "missing": "zero"}


def test_every_generated_dataset_reads_files_its_family_writes():
    for spec in DATASETS.values():
        if spec.synthetic in FAMILY_FILES:
            assert set(spec.layouts["synthetic"].values()) <= set(FAMILY_FILES[spec.synthetic]), spec.name


def _imported(statement: str) -> list[str]:
    code = f"import sys; {statement}; print(' '.join(m for m in sys.modules if m.startswith('attnexp')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.split()


def test_the_registry_does_not_import_the_generators():
    assert not [m for m in _imported("import attnexp.datasets") if m.startswith("attnexp.datasets.generated")]
