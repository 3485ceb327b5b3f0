"""Settings objects for tests, built the way the workflow builds them: from a config validated against the
schema (so the schema's defaults apply), with the values a test cares about."""

from functools import cache
from pathlib import Path

from attnexp.models.train import TrainSettings

SCHEMA = Path(__file__).resolve().parents[1] / "workflow/schemas/config.schema.yaml"


@cache
def _defaults() -> dict:
    from attnexp.config import validate_config

    minimal = {"datasets": ["syn_sentiment"], "encoders": ["lstm"], "attentions": ["tanh"], "seeds": [0]}
    return validate_config({**minimal, "model_selection": {}, "seeding": {}}, SCHEMA)


def train_settings(epochs: int, batch_size: int, seed: int = 0, paper: str = "jw", **changes) -> TrainSettings:
    """`TrainSettings.from_config` on the default config; `changes` override any field (e.g. select_on)."""
    from dataclasses import replace

    settings = TrainSettings.from_config(
        _defaults(), seed=seed, hyperparameters={"epochs": epochs, "batch_size": batch_size}, paper=paper
    )
    return replace(settings, epochs=epochs, batch_size=batch_size, **changes)
