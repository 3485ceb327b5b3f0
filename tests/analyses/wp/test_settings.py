"""WPSettings mirrors the schema's `wp` section: same keys, no defaults of its own, built from the validated config."""

import dataclasses
from pathlib import Path

import pytest
import yaml

from attnexp.analyses.wp.settings import GRID_KEYS, GUIDE_VARIANTS, VARIANTS, AdversarySchedule, WPSettings
from attnexp.config import PACKAGED_SCHEMA, validate_config
from attnexp.pipeline.settings import wp_settings

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = PACKAGED_SCHEMA


def schema_section() -> dict:
    return yaml.safe_load(SCHEMA.read_text())["properties"]["wp"]


def validated(**wp) -> dict:
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["wp"].update(wp)
    return validate_config(config, SCHEMA)


def test_fields_are_the_schema_keys_without_defaults():
    section = schema_section()
    fields = dataclasses.fields(WPSettings)
    assert [f.name for f in fields] == list(section["properties"])
    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING for f in fields)
    adversary = dataclasses.fields(AdversarySchedule)
    assert [f.name for f in adversary] == list(section["properties"]["adversary"]["properties"])
    assert all(f.default is dataclasses.MISSING for f in adversary)


def test_from_config_reads_the_validated_section_and_fills_schema_defaults():
    config = validated()
    settings = wp_settings(config)
    assert settings.datasets == tuple(config["wp"]["datasets"])
    assert settings.adversary == AdversarySchedule(**config["wp"]["adversary"])
    bare = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    del bare["wp"]
    defaults = wp_settings(validate_config(bare, SCHEMA))
    assert defaults.adversary == AdversarySchedule(max_epochs=80, patience=10)
    assert defaults.datasets == () and defaults.select_on == "dev"
    with pytest.raises(KeyError):
        wp_settings({"wp": {}})


def test_per_dataset_lambdas_override_the_default():
    settings = wp_settings(
        validated(lambdas={"default": [1, 10], "syn_sentiment": [0.5]}, diag_adv_lambda={"default": 1, "syn_sentiment": 2})
    )
    assert settings.lambdas_for("syn_sentiment") == [0.5] and settings.lambdas_for("imdb") == [1, 10]
    assert settings.diag_lambda_for("syn_sentiment") == 2 and settings.diag_lambda_for("imdb") == 1
    assert settings.lambda_labels(["syn_sentiment", "imdb"]) == ["0.5", "1", "10", "2"]


def test_run_options_are_every_key_but_the_grid():
    config = validated()
    options = wp_settings(config).run_options()
    assert options == {k: v for k, v in config["wp"].items() if k not in GRID_KEYS}
    yaml.safe_dump(options)  # plain types only: it goes into every run's config.yaml


def test_guide_variants_are_run_variants():
    settings = wp_settings(validated(guides=["base", "uniform"]))
    assert settings.guide_variants() == ["mlp_base", "mlp_uniform"]
    assert set(GUIDE_VARIANTS.values()) <= set(VARIANTS)
