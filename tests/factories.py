"""Settings objects for tests, built the way the workflow builds them (`attnexp.pipeline.settings` on a config
validated against the schema, so the schema's defaults apply), with the values a test cares about."""

from dataclasses import replace
from pathlib import Path

from attnexp.analyses.jw.settings import AdversarySettings
from attnexp.models.classifier import ModelConfig
from attnexp.models.settings import FitSettings
from attnexp.pipeline.plan import Plan
from attnexp.pipeline.settings import PreprocessSettings, analysis_settings, default_config, fit_settings


def validated_config(**sections) -> dict:
    """A minimal grid plus `sections` (e.g. `analyses={...}`), validated: every other key takes its default."""
    return default_config(**sections)


def train_settings(epochs: int, batch_size: int, seed: int = 0, paper: str = "jw", **changes) -> FitSettings:
    """The default config's `fit_settings`; `changes` override any field (e.g. select_on). The device is resolved
    here, as a job resolves it."""
    from attnexp.models.device import resolve_device

    sizes = {"epochs": epochs, "batch_size": batch_size, "learning_rate": 1e-3}
    settings = fit_settings(validated_config(), seed=seed, paper=paper, hyperparameters=sizes)
    changes.setdefault("device", resolve_device(settings.device))
    return replace(settings, epochs=epochs, batch_size=batch_size, **changes)


def adversary_settings(**overrides) -> AdversarySettings:
    """The schema's adversary settings with `overrides` (field names, e.g. `steps`, `lam`)."""
    return replace(analysis_settings(validated_config(), batch_size=1).adversary, **overrides)


def preprocess_job(dataset: str, raw_dir) -> tuple[dict, PreprocessSettings]:
    """The preprocess job of `dataset` as the workflow plans it on the default config with its raw data under
    `raw_dir` (`data.raw_data_dir`): its inputs (the raw files, role -> path) and its settings."""
    config = validated_config(datasets=[dataset], data={"raw_data_dir": str(raw_dir)})
    plan = Plan.from_config(config)
    return plan.raw_files(dataset), PreprocessSettings.from_plan(plan, dataset)


def synthetic_data(family: str, out_dir, seed: int, **options) -> list[Path]:
    """A generated family (`sentiment`, `nli`, `babi`) written into `out_dir` as the `synthesize` job writes it
    (`generate`): the schema's `synthetic.<family>` options with `options` (e.g. `sizes`, `vocab_size`) replacing theirs."""
    from attnexp.datasets.generated.synthetic import generate

    return generate(family, out_dir, seed, validated_config()["synthetic"][family] | options)


def tiny_model_config(task: str, encoder: str, attention: str) -> ModelConfig:
    """A tiny classifier's config for hand-made batches: ids below 30, 2 classes for BC and 4 otherwise, embeddings of
    8, hidden size 6, 3 CNN filters."""
    classes = 2 if task == "bc" else 4
    return ModelConfig(30, classes, task, encoder=encoder, attention=attention, embedding_dim=8, hidden_size=6, cnn_filters=3)
