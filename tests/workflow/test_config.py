"""Bad configuration is rejected with a message naming the key, the value and what is allowed."""

import copy

import pytest
import yaml

from attnexp.config import PACKAGED_SCHEMA, ConfigError, validate_config
from tests.conftest import REPO

SCHEMA = PACKAGED_SCHEMA


@pytest.fixture()
def default_config():
    return yaml.safe_load((REPO / "config/config.yaml").read_text())


def test_the_embedded_default_is_valid(default_config):
    validated = validate_config(copy.deepcopy(default_config), SCHEMA)
    assert validated["model_selection"]["split"] == "dev"


@pytest.mark.parametrize(
    "change,expected",
    [
        (lambda c: c.update(encoders=["lstm", "lstn"]), ["encoders[1]", "'lstn'", "lstm", "cnn", "average"]),
        (lambda c: c.update(datasets=["sst2"]), ["datasets[0]", "'sst2'", "syn_sentiment"]),
        (lambda c: c.update(attentions=[]), ["attentions", "empty"]),
        (lambda c: c.update(epochs=3), ["unknown config key", "'epochs'", "datasets"]),
        (lambda c: c["model_selection"].update(split="validation"), ["model_selection.split", "dev", "test"]),
        (lambda c: c.update(seeds=["zero"]), ["seeds[0]", "integer"]),
        (lambda c: c["synthetic"]["sentiment"].update(min_len=50), ["min_len", "max_len"]),
        (lambda c: c.update(hyperparameters={"sst9": {"epochs": 2}}), ["hyperparameters", "sst9"]),
    ],
)
def test_invalid_config_is_rejected_with_a_clear_message(default_config, change, expected):
    change(default_config)
    with pytest.raises(ConfigError) as err:
        validate_config(default_config, SCHEMA)
    for text in expected:
        assert text in str(err.value)
