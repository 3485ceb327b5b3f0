"""Issue 37 §4 probe 1: a job that pairs a trained model with a preprocessed dataset (the J&W analyses, W&P's J&W
adversary, the A&Z analyses) checks that the checkpoint was trained on that dataset (`models.checkpoint.check_matches`):
a model.pt copied with its sha256 from another dataset stops the job with an error naming both files and both
values, instead of being analysed silently."""

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from attnexp import paths
from attnexp.errors import CorruptFileError
from attnexp.io import write_json
from attnexp.models.checkpoint import check_matches, read_checkpoint, save_model, write_run
from attnexp.models.train import build_model
from attnexp.models.transformer import build_transformer
from attnexp.pipeline.az import run_az_analyse
from attnexp.pipeline.jw import run_analyze
from attnexp.pipeline.plan import Plan
from attnexp.pipeline.settings import AnalyzeSettings, AZAnalysisSettings, WPAnalysisSettings
from attnexp.pipeline.wp import run_wp_jw_adversary
from tests.factories import validated_config
from tests.fakes import write_fake_dataset

CONFIG = validated_config()
VOCAB = {"syn_sentiment": 66, "my_reviews": 82}  # the probe's vocabulary sizes


def dataset(root, name: str) -> dict:
    """The preprocessed files of `name` under `root` (meta.json with a vocabulary of VOCAB[name] entries)."""
    meta, _ = write_fake_dataset(root, name, "bc", ["neg", "pos"], np.random.default_rng(0))
    meta["vocab"] = meta["vocab"][:4] + [f"w{i}" for i in range(VOCAB[name] - 4)]
    files = {key: root / path for key, path in paths.preprocessed_files(name).items() if key != "timings"}
    write_json(files["meta"], meta)
    return files


def train_run(root, name: str, model_dir: str, transformer: bool = False) -> str:
    """A run's files as training writes them (`write_run`: the run config records the dataset), untrained."""
    meta = {"vocab": [str(i) for i in range(VOCAB[name])], "classes": ["neg", "pos"], "task": "bc"}
    if transformer:
        model = build_transformer(meta, n_layers=1, n_heads=1, width=8, dropout=0.0, max_length=64)
    else:
        model = build_model(meta, "lstm", "tanh", embedding_dim=8, hidden_size=8)
    outputs = paths.in_folder(str(root / model_dir), paths.RUN_FILES)
    history = pd.DataFrame({"epoch": [1], "train_loss": [0.5], "kept": [True], "seconds": [0.1]})
    write_run(outputs, model, history, {"dataset": name, "seed": 0}, {"accuracy": 0.5})
    return outputs["model"]


def copied_over(root, transformer: bool = False) -> tuple[dict, str]:
    """syn_sentiment's data with a model.pt (and its sha256) copied from a run on the user dataset my_reviews."""
    ours = dataset(root, "syn_sentiment")
    dataset(root, "my_reviews")
    theirs = train_run(root, "my_reviews", "theirs", transformer)
    model = train_run(root, "syn_sentiment", "ours", transformer)
    shutil.copy2(theirs, model)
    shutil.copy2(paths.checksum_file(theirs), paths.checksum_file(model))
    return ours, model


def assert_names_both(err: pytest.ExceptionInfo, model: str, meta) -> None:
    message = str(err.value)
    assert message.startswith(f"{model} was not trained on the data of {meta}: ")
    assert "the checkpoint records dataset 'my_reviews' and vocabulary size 82" in message
    assert f"while {meta} records dataset 'syn_sentiment' and vocabulary size 66 (" in message
    assert "Restore this run's own model.pt and model.pt.sha256" in message
    assert re.search(rf"`snakemake --cores 1 --forcerun {re.escape(model)}`", message)


def test_the_analyses_refuse_a_checkpoint_of_another_dataset(tmp_path):
    data, model = copied_over(tmp_path)
    outputs = {key: tmp_path / "out" / name for key, name in paths.ANALYSIS_FILES.items()}
    settings = AnalyzeSettings.from_plan(Plan.from_config(CONFIG), "syn_sentiment", "0", "lstm", "tanh")
    with pytest.raises(CorruptFileError) as err:
        run_analyze(inputs={**data, "model": model}, outputs=outputs, settings=settings)
    assert_names_both(err, model, data["meta"])
    assert not (tmp_path / "out").exists()  # nothing analysed


def test_the_wp_jw_adversary_checks_against_the_meta_beside_the_instances(tmp_path):
    data, model = copied_over(tmp_path)  # its rule declares the instances only; meta.json lies beside them
    settings = WPAnalysisSettings.from_plan(Plan.from_config(CONFIG), "syn_sentiment", 0)
    with pytest.raises(CorruptFileError) as err:
        run_wp_jw_adversary(
            inputs={"model": model, "instances": data["instances"]}, outputs={"table": tmp_path / "t.parquet"}, settings=settings
        )
    assert_names_both(err, model, data["meta"])


def test_the_az_analyses_refuse_a_transformer_of_another_dataset(tmp_path):
    data, model = copied_over(tmp_path, transformer=True)
    settings = AZAnalysisSettings.from_plan(Plan.from_config(CONFIG), "syn_sentiment", 0)
    outputs = {key: tmp_path / "out" / name for key, name in paths.AZ_FILES.items()}
    with pytest.raises(CorruptFileError) as err:
        run_az_analyse(inputs={"model": model, "instances": data["instances"]}, outputs=outputs, settings=settings)
    assert_names_both(err, model, data["meta"])


def test_check_matches_compares_what_the_checkpoint_records(tmp_path):
    data = dataset(tmp_path, "syn_sentiment")
    meta = json.loads(data["meta"].read_text())
    own = read_checkpoint(train_run(tmp_path, "syn_sentiment", "own"))
    check_matches(own, meta, "own/model.pt", data["meta"])  # its own data: no error
    renamed = {**own, "extra": {"run_config": {"dataset": "my_reviews"}}}
    with pytest.raises(
        CorruptFileError, match=r"records dataset 'my_reviews', while meta\.json records dataset 'syn_sentiment' \("
    ):
        check_matches(renamed, meta, "m.pt", "meta.json")
    model = build_model({**meta, "vocab": meta["vocab"] * 2}, "lstm", "tanh", embedding_dim=8, hidden_size=8)
    save_model(model, tmp_path / "old.pt")  # an older checkpoint: no run config, so only the vocabulary is compared
    with pytest.raises(CorruptFileError, match=r"records vocabulary size 132, while meta\.json records vocabulary size 66 \("):
        check_matches(read_checkpoint(tmp_path / "old.pt"), meta, "old.pt", "meta.json")
    hf = {"kind": "hf", "config": {"vocab_size": 30522}, "extra": {"run_config": {"dataset": "syn_sentiment", "hf_model": "a"}}}
    check_matches(hf, {**meta, "hf_model": {"name": "a"}}, "m.pt", "meta.json")  # its tokenizer's vocabulary
    with pytest.raises(
        CorruptFileError, match=r"records Hugging Face model 'a', while meta\.json records Hugging Face model 'b' \("
    ):
        check_matches(hf, {**meta, "hf_model": {"name": "b"}}, "m.pt", "meta.json")
