"""Saved models and the files of one training run.

A checkpoint holds the model's `kind` ("classifier": the J&W attention classifier, "transformer": the A&Z
Transformer), its config, its weights and `extra` (the run config). `load_model` rebuilds the class of the
kind; checkpoints written before kinds were recorded are told apart by their encoder. `write_run` writes
every run's files (`attnexp.paths.RUN_FILES`): J&W, W&P and A&Z runs look the same on disk.
"""

from dataclasses import asdict

import pandas as pd
import torch

from attnexp.io import atomic_path, write_csv, write_json, write_yaml
from attnexp.models.classifier import AttentionClassifier, ModelConfig
from attnexp.models.interface import AttentionModel
from attnexp.models.transformer import TransformerClassifier, TransformerConfig

KINDS = {"classifier": (AttentionClassifier, ModelConfig), "transformer": (TransformerClassifier, TransformerConfig)}
# kinds saved by code above the models (which never import it), and where their loader lives
LOADED_ELSEWHERE = {"guided": "attnexp.analyses.wp.donors.load_guided_model (it needs the guide files)"}


def save_model(model: AttentionModel, path, extra: dict | None = None) -> None:
    """Write kind, config, weights and `extra` atomically; the kind is the class's `checkpoint_kind`."""
    checkpoint = {"kind": model.checkpoint_kind, "config": asdict(model.config), "state_dict": model.state_dict()}
    with atomic_path(path) as tmp:
        torch.save({**checkpoint, "extra": extra or {}}, tmp)


def checkpoint_kind(checkpoint: dict) -> str:
    """The recorded kind; older checkpoints have none: a "transformer" encoder means the Transformer."""
    if "kind" in checkpoint:
        return checkpoint["kind"]
    return "transformer" if checkpoint["config"]["encoder"] == "transformer" else "classifier"


def load_model(path, device: str = "cpu") -> AttentionModel:
    """The model saved at `path` (on any device), in eval mode on `device` (J&W classifier or A&Z Transformer)."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    kind = checkpoint_kind(checkpoint)
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


def write_run(outputs: dict, model: AttentionModel, history: pd.DataFrame, run_config: dict, metrics: dict) -> None:
    """One training run's files (keys of `attnexp.paths.RUN_FILES`): the model with its run config, the
    per-epoch log, the run config and the test metrics."""
    save_model(model, outputs["model"], extra={"run_config": run_config})
    write_csv(outputs["history"], history)
    write_yaml(outputs["config"], run_config)
    write_json(outputs["metrics"], metrics)
