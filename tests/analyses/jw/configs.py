"""Settings as the workflow builds them: from a config validated against the schema (which holds every default)."""

from dataclasses import replace

from attnexp.analyses.jw.adversary import AdversarySettings
from attnexp.config import validate_config
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


def validated_config(analyses: dict | None = None) -> dict:
    """A minimal grid plus `analyses`, validated (defaults filled)."""
    config = {"datasets": ["syn_sentiment"], "encoders": ["lstm"], "attentions": ["tanh"], "seeds": [0]}
    return validate_config({**config, "analyses": analyses or {}}, SCHEMA)


def adversary_settings(**overrides) -> AdversarySettings:
    """The schema's adversary settings with `overrides` (field names, e.g. `steps`, `lam`)."""
    return replace(AdversarySettings.from_config(validated_config()["analyses"]), **overrides)
