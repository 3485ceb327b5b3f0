"""What the config decides for a dataset (attnexp.pipeline.policy)."""

import copy
import os
import re
import shutil
import time

import pytest
import yaml

from attnexp import paths
from attnexp.config import ConfigError
from attnexp.datasets import DATASETS, get_dataset
from attnexp.pipeline import policy
from attnexp.pipeline.plan import Plan
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


YEAR = 365 * 86400


def _age(path, seconds: float) -> None:
    """Set `path`'s modification time `seconds` from now (positive: in the future, as `touch -d '+1 year'`)."""
    stamp = time.time() + seconds
    os.utime(path, (stamp, stamp))


def test_a_user_dataset_file_modified_in_the_future_is_refused_before_any_job(tmp_path):
    # issue 37 §4 probe 7: it passed validation, then every run stopped after preprocess with Snakemake's clock-skew
    # error (an output older than its input), leaving an orphan .sha256
    from tests.datasets.test_user import REVIEWS
    from tests.factories import validated_config

    csv = tmp_path / "reviews.csv"
    shutil.copy(REVIEWS, csv)
    _age(csv, YEAR)
    declaration = {"task": "bc", "path": str(csv), "text": "review", "label": "sentiment", "split_column": "part"}
    config = validated_config(datasets=["my_reviews"], user_datasets={"my_reviews": declaration})
    with pytest.raises(ConfigError) as err:
        Plan.from_config(config, basedir=".")
    message = str(err.value)
    assert message.startswith("1 raw file(s) modified in the future:\n  - config key 'user_datasets.my_reviews.path': file ")
    assert re.search(
        rf"{re.escape(str(csv))} has modification time \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d, 365 days after now ", message
    )
    assert f"give it the current time with `touch {csv}`" in message and "clock skew" in message
    _age(csv, 0)
    config = validated_config(datasets=["my_reviews"], user_datasets={"my_reviews": declaration})
    assert Plan.from_config(config, basedir=".").datasets == ["my_reviews"]  # after `touch`: accepted
    assert "my_reviews" not in DATASETS  # known to the plan, never to the registry


def test_raw_data_dir_and_user_files_modified_in_the_future_are_refused_beyond_a_tolerance(data, tmp_path):
    for split in ("train", "dev", "test"):
        (tmp_path / "sst").mkdir(exist_ok=True)
        (tmp_path / "sst" / f"{split}.txt").write_text("(2 (2 a) (2 b))\n")
    _age(tmp_path / "sst/train.txt", 5400)
    _age(tmp_path / "sst/dev.txt", 2)  # within FUTURE_TOLERANCE_S (clock granularity): accepted
    cnn = {role: tmp_path / f"cnn_{role}.jsonl" for role in ("train", "dev", "test")}
    for path in cnn.values():
        path.write_text("{}\n")
    _age(cnn["test"], 2 * YEAR)
    data.update(raw_data_dir=str(tmp_path), on_missing="fail")
    data["user_files"]["cnn"] = {role: str(path) for role, path in cnn.items()}
    with pytest.raises(ConfigError) as err:
        policy.check_datasets_available(["syn_sentiment", "sst", "cnn"], data, REPO)
    problems = str(err.value).split("\n  - ")[1:]
    assert len(problems) == 2
    assert problems[0].startswith(f"dataset 'sst': raw file (train, under data.raw_data_dir) {tmp_path}/sst/train.txt has ")
    assert ", 1.5 h after now (" in problems[0] and f"`touch {tmp_path}/sst/train.txt`" in problems[0]
    assert problems[1].startswith(f"config key 'data.user_files.cnn.test': file {cnn['test']} has ")
    assert "730 days after now" in problems[1]
    _age(tmp_path / "sst/train.txt", 0)
    _age(cnn["test"], -60)  # the past is fine
    assert policy.check_datasets_available(["syn_sentiment", "sst", "cnn"], data, REPO) == ["syn_sentiment", "sst", "cnn"]


def test_a_linzen_corpus_modified_in_the_future_is_refused_at_validation(tmp_path):
    from tests.factories import validated_config

    corpus = tmp_path / "agr_50_mostcommon_10K.tsv"
    corpus.write_text("x\n")
    _age(corpus, YEAR)
    with pytest.raises(ConfigError, match=rf"'az.linzen_path': file {re.escape(str(corpus))} has modification time .*`touch "):
        validated_config(az={"linzen_path": str(corpus)})
