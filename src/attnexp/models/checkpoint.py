"""Saved models and the files of one training run.

A checkpoint holds the model's `kind` ("classifier": the J&W attention classifier, "transformer": the A&Z
Transformer), its config, its weights and `extra` (the run config). `load_model` rebuilds the class of the
kind; checkpoints written before kinds were recorded are told apart by their encoder. `write_run` writes
every run's files (`attnexp.paths.RUN_FILES`): J&W, W&P and A&Z runs look the same on disk.
"""

import pickle
import zipfile
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import torch

from attnexp.errors import CorruptFileError
from attnexp.io import rebuild, to_bytes, verify_checksum, write_bytes, write_csv, write_json, write_yaml
from attnexp.models.classifier import AttentionClassifier, ModelConfig
from attnexp.models.interface import AttentionModel
from attnexp.models.transformer import TransformerClassifier, TransformerConfig
from attnexp.paths import checksum_file
from attnexp.provenance import code_version

KINDS = {"classifier": (AttentionClassifier, ModelConfig), "transformer": (TransformerClassifier, TransformerConfig)}
# kinds saved by code above the models (which never import it), and where their loader lives
LOADED_ELSEWHERE = {"guided": "attnexp.analyses.wp.donors.load_guided_model (it needs the guide files)"}


def save_model(model: AttentionModel, path, extra: dict | None = None) -> None:
    """Write kind, config, weights and `extra` atomically; the kind is the class's `checkpoint_kind`."""
    checkpoint = {"kind": model.checkpoint_kind, "config": asdict(model.config), "state_dict": model.state_dict()}
    # saved through a buffer: torch.save records its target's file name in the archive, and a temporary
    # name there would make identical runs differ; the sha256 sidecar catches later damage
    write_bytes(path, to_bytes(torch.save, {**checkpoint, "extra": extra or {}}), checksum=True)


def read_checkpoint(path) -> dict:
    """The checkpoint dictionary at `path`, loaded weights-only after checking its recorded sha256; a damaged
    file raises CorruptFileError naming it (never advising unsafe loading)."""
    verify_checksum(path)
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except (RuntimeError, OSError, EOFError, KeyError, ValueError, pickle.UnpicklingError, zipfile.BadZipFile) as err:
        raise CorruptFileError(
            f"{path} is not a readable checkpoint ({type(err).__name__}); it is damaged, truncated or not written "
            f"by this workflow: {rebuild(path)}."
        ) from None


def checkpoint_kind(checkpoint: dict) -> str:
    """The recorded kind; older checkpoints have none: a "transformer" encoder means the Transformer."""
    if "kind" in checkpoint:
        return checkpoint["kind"]
    return "transformer" if checkpoint["config"]["encoder"] == "transformer" else "classifier"


def check_matches(checkpoint: dict, meta: Mapping, model_path, meta_path) -> None:
    """Raise CorruptFileError when the checkpoint read from `model_path` was not trained on the preprocessed data whose
    meta.json (`meta`, read from `meta_path`) a job pairs it with: the dataset its run config records (and, for a
    Hugging Face run, the model whose tokenizer made the data) or its vocabulary size differs from the meta.json's,
    as when a model.pt is copied with its sha256 from another dataset. What a checkpoint does not record (the run
    config of older ones) is not compared. Pure: reads no file."""
    run_config = (checkpoint.get("extra") or {}).get("run_config") or {}
    config = checkpoint.get("config") or {}
    kind = checkpoint_kind(checkpoint)
    recorded, expected = [], []
    if "dataset" in run_config and "dataset" in meta and run_config["dataset"] != meta["dataset"]:
        recorded.append(f"dataset {run_config['dataset']!r}")
        expected.append(f"dataset {meta['dataset']!r}")
    tokenized_by = (meta.get("hf_model") or {}).get("name")
    if kind == "hf":  # its vocabulary is its tokenizer's: compare which model it is
        if "hf_model" in run_config and tokenized_by is not None and run_config["hf_model"] != tokenized_by:
            recorded.append(f"Hugging Face model {run_config['hf_model']!r}")
            expected.append(f"Hugging Face model {tokenized_by!r} (its tokenizer made the data)")
    elif "vocab_size" in config and "vocab" in meta and int(config["vocab_size"]) != len(meta["vocab"]):
        recorded.append(f"vocabulary size {int(config['vocab_size'])}")
        expected.append(f"vocabulary size {len(meta['vocab'])}")
    if recorded:
        name, sidecar = Path(model_path).name, Path(checksum_file(str(model_path))).name
        raise CorruptFileError(
            f"{model_path} was not trained on the data of {meta_path}: the checkpoint records {' and '.join(recorded)}, "
            f"while {meta_path} records {' and '.join(expected)} (a {name} copied from another dataset or run, with "
            f"its {sidecar}). Restore this run's own {name} and {sidecar}, or {rebuild(model_path)}."
        )


def load_model(path, device: str = "cpu") -> AttentionModel:
    """The model saved at `path` (on any device), in eval mode on `device` (J&W classifier, A&Z Transformer or
    Hugging Face model)."""
    checkpoint = read_checkpoint(path)
    kind = checkpoint_kind(checkpoint)
    if kind == "hf":  # a Hugging Face model (models.hf; imports transformers only here)
        from attnexp.models.hf.loading import from_checkpoint

        return from_checkpoint(checkpoint).to(device)
    if kind not in KINDS:
        where = LOADED_ELSEWHERE.get(kind, "the loader of the code that saved it")
        raise ValueError(
            f"{path} holds a {kind!r} model, which attnexp.models.checkpoint.load_model cannot rebuild "
            f"(it loads {', '.join(KINDS)}); load it with {where}"
        )
    model_class, config_class = KINDS[kind]
    model = model_class(config_class(**checkpoint["config"]))
    model.load_state_dict(checkpoint["state_dict"])
    return model.to(device).eval()


def write_run(
    outputs: dict, model: AttentionModel, history: pd.DataFrame, run_config: dict, metrics: dict, save=save_model
) -> None:
    """One training run's files (keys of `attnexp.paths.RUN_FILES`), for every kind of run: the model with its run
    config (`save(model, path, extra)`; a Hugging Face model has its own format), the per-epoch log, the run config
    (with the code version and the job's torch threads, which can change float rounding) and the test metrics; the
    per-epoch wall times (`history["seconds"]`) go to `timings.json` alone, so every other file is byte-identical
    between runs."""
    run_config = {**run_config, "threads": torch.get_num_threads(), "code_version": code_version()}
    save(model, outputs["model"], extra={"run_config": run_config})
    write_csv(outputs["history"], history.drop(columns="seconds", errors="ignore"))
    write_yaml(outputs["config"], run_config)
    write_json(outputs["metrics"], _explain_missing(metrics))
    if "timings" in outputs and "seconds" in history:
        write_json(outputs["timings"], {"seconds_per_epoch": history["seconds"].astype(float).round(3).tolist()})


def _explain_missing(metrics: dict) -> dict:
    """NaN metrics are written as null (strict JSON) with the reason in `undefined_metrics`: ROC-AUC and PR-AUC
    need both classes in the test set."""
    undefined = sorted(k for k, v in metrics.items() if isinstance(v, float) and v != v)
    if not undefined:
        return metrics
    reason = "the test set holds a single class" if {"roc_auc", "pr_auc"} & set(undefined) else "not computable"
    return {**metrics, "undefined_metrics": {k: reason for k in undefined}}
