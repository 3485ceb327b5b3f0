"""Settings objects for tests, built the way the workflow builds them: from a config validated against the
schema (so the schema's defaults apply), with the values a test cares about."""

from dataclasses import replace

from attnexp.analyses.jw.settings import AdversarySettings
from attnexp.config import validate_config
from attnexp.models.settings import TrainSettings
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/config.schema.yaml"
GRID = {
    "datasets": ["syn_sentiment"],
    "encoders": ["lstm"],
    "attentions": ["tanh"],
    "seeds": [0],
    "model_selection": {},
    "seeding": {},
}


def validated_config(**sections) -> dict:
    """A minimal grid plus `sections` (e.g. `analyses={...}`), validated: every other key takes its default."""
    return validate_config({**GRID, **sections}, SCHEMA)


def train_settings(epochs: int, batch_size: int, seed: int = 0, paper: str = "jw", **changes) -> TrainSettings:
    """`TrainSettings.from_config` on the default config; `changes` override any field (e.g. select_on)."""
    settings = TrainSettings.from_config(
        validated_config(), seed=seed, hyperparameters={"epochs": epochs, "batch_size": batch_size}, paper=paper
    )
    return replace(settings, epochs=epochs, batch_size=batch_size, **changes)


def adversary_settings(**overrides) -> AdversarySettings:
    """The schema's adversary settings with `overrides` (field names, e.g. `steps`, `lam`)."""
    return replace(AdversarySettings.from_config(validated_config()["analyses"]), **overrides)
