"""Hostile and careless configs (issue 15): `--config` overrides typed as strings by Snakemake, values the schema
used to accept and a job then choked on, YAML syntax errors, and the A&Z datasets' raw-data check."""

import copy

import pytest
import yaml

from attnexp.config import PACKAGED_SCHEMA, ConfigError, coerce_by_schema, load_config_file, load_schema, validate_config
from attnexp.pipeline.policy import check_datasets_available
from tests.conftest import REPO
from tests.workflow.helpers import snakemake, tiny_config

SCHEMA = PACKAGED_SCHEMA


@pytest.fixture()
def default_config():
    return yaml.safe_load((REPO / "config/config.yaml").read_text())


def test_strings_from_the_command_line_become_the_types_the_schema_asks_for():
    """Snakemake parses `--config` items inside lists and mappings with YAML's BaseLoader: all strings."""
    given = {
        "seeds": ["0", "1"],
        "analyses": {"permutations": "10", "memory_budget_mb": "1e2", "bc_loo": "false"},
        "hyperparameters": {"imdb": {"epochs": "1"}},
        "wp": {"lambdas": {"default": ["0.001", "1"]}, "jw_reported": "null"},
        "data": {"raw_data_dir": "../shared/data", "user_files": {"adr": {"csv": "~"}}},
        "datasets": ["sst"],
    }
    coerced = coerce_by_schema(given, load_schema(SCHEMA))
    assert coerced["seeds"] == [0, 1] and all(type(s) is int for s in coerced["seeds"])
    assert coerced["analyses"] == {"permutations": 10, "memory_budget_mb": 100.0, "bc_loo": False}
    assert coerced["hyperparameters"]["imdb"]["epochs"] == 1
    assert coerced["wp"]["lambdas"]["default"] == [0.001, 1] and coerced["wp"]["jw_reported"] is None
    assert coerced["data"]["raw_data_dir"] == "../shared/data" and coerced["data"]["user_files"]["adr"]["csv"] is None
    assert coerced["datasets"] == ["sst"]
    assert coerce_by_schema({"seeds": ["1.0"]}, load_schema(SCHEMA))["seeds"] == ["1.0"]  # left for the validator


@pytest.mark.parametrize(
    "change,expected",
    [
        (lambda c: c.update(seeds=[1.0]), ["seeds[0]", "1.0", "integer"]),
        (lambda c: c.update(seeds=[1e20]), ["seeds[0]", "integer"]),
        (lambda c: c.update(seeds=[2**32]), ["seeds[0]", "4294967295"]),
        (lambda c: c["wp"].update(seeds=[2**40]), ["wp.seeds[0]", "4294967295"]),
        (lambda c: c.update(seeds=["1.0"]), ["seeds[0]", "integer"]),
        (lambda c: c["analyses"].update(memory_budget_mb=float("nan")), ["analyses.memory_budget_mb", "nan", "finite"]),
        (lambda c: c["analyses"]["adversary"].update(lr=float("inf")), ["analyses.adversary.lr", "inf", "finite"]),
        (lambda c: c["wp"].update(lambdas={"default": [float("nan")]}), ["wp.lambdas.default[0]", "finite"]),
        (lambda c: c["synthetic"].update(seed=-1), ["synthetic.seed", "-1"]),
        (lambda c: c.update(hyperparameters={"syn_sentiment": {"epochs": 10**9}}), ["hyperparameters.syn_sentiment.epochs"]),
        (lambda c: c.update(hyperparameters={"syn_sentiment": {"hidden_size": 10**6}}), ["hidden_size", "8192"]),
        (lambda c: c["synthetic"]["sentiment"].update(sizes={"train": 10**12, "dev": 1, "test": 1}), ["sizes.train"]),
        (lambda c: c["az"]["model"].update(width=100, n_heads=8), ["az.model.width", "100", "n_heads=8", "divisible"]),
        (lambda c: c["az"]["model"].update(n_layers=10**6), ["az.model.n_layers"]),
        (lambda c: c["analyses"].update(permutations=10**9), ["analyses.permutations"]),
        (lambda c: c["data"].update(user_files={"adr": {"csv": str(REPO / "src")}}), ["data.user_files.adr.csv", "directory"]),
        (lambda c: c["data"].update(embeddings={"glove_840b": str(REPO)}), ["data.embeddings.glove_840b", "directory"]),
    ],
)
def test_values_that_used_to_fail_inside_a_job_are_refused_up_front(default_config, change, expected):
    change(default_config)
    with pytest.raises(ConfigError) as err:
        validate_config(copy.deepcopy(default_config), SCHEMA)
    for text in expected:
        assert text in str(err.value)


def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path):
    bad = tmp_path / "my.yaml"
    bad.write_text("datasets: [syn_sentiment]\nseeds: [0, 1\nencoders: [lstm]\n")
    with pytest.raises(ConfigError, match=r"my\.yaml, line 3, column \d+: YAML syntax error"):
        load_config_file(bad)


def test_a_user_file_that_is_a_directory_counts_as_missing(tmp_path):
    from attnexp.datasets.acquire import missing_data
    from attnexp.datasets.registry import get_dataset

    problem = missing_data(get_dataset("adr"), None, {"adr": {"csv": str(tmp_path)}})
    assert "is a directory" in problem


def test_az_datasets_are_checked_and_skipped_like_the_grid(tmp_path):
    data = {"raw_data_dir": str(tmp_path), "on_missing": "skip", "user_files": {}}
    assert check_datasets_available(["syn_agreement", "sst"], data, REPO, allow_empty=True) == ["syn_agreement"]
    assert check_datasets_available(["sst"], data, REPO, allow_empty=True) == []
    with pytest.raises(ConfigError, match="sst"):
        check_datasets_available(["sst"], {**data, "on_missing": "fail"}, REPO, allow_empty=True)


def _one_dataset_config(**overrides) -> dict:
    return tiny_config(datasets=["syn_sentiment"], encoders=["average"], **overrides)


def test_documented_command_line_overrides_work(tmp_path):
    """README: `--config seeds='[0,1,2]'`, numeric mappings, the W&P lambda sweep; az.datasets obeys on_missing."""
    empty_raw = tmp_path / "raw"
    empty_raw.mkdir()
    result = snakemake(
        tmp_path,
        "--dry-run",
        "--quiet",
        "host",  # the profile's quiet: [rules, host] hides the jobs' outputs
        "--config",
        "seeds=[0,1,2]",
        "analyses={permutations: 10, adversary: {lr: 0.5}}",
        "hyperparameters={syn_sentiment: {epochs: 1, embedding_dim: 16}}",
        "wp={datasets: [syn_sentiment], seeds: [50], lambdas: {default: [0.5, 2]}}",
        "az={datasets: [syn_agreement, sst]}",
        "stage_datasets=as_listed",  # sst, outside the grid, stays in az.datasets
        f"data={{raw_data_dir: {empty_raw}, on_missing: skip}}",
        config=_one_dataset_config(),
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "seed2" in output and "lambda0.5" in output and "lambda2/" in output
    assert "Skipping 1 dataset(s)" in output and "results/az/sst" not in output


def test_a_yaml_syntax_error_in_the_config_file_stops_snakemake_naming_the_line(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config/config.yaml").write_text("datasets: [syn_sentiment\nseeds: [0]\n")
    result = snakemake(tmp_path, "--dry-run")
    assert result.returncode != 0 and "config/config.yaml, line 2" in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()


def test_every_schema_property_documents_itself():
    """A key without a `description` is undocumented in the schema (new keys need one; see the contract)."""

    def undocumented(node, prefix=""):
        missing = []
        for name, sub in node.get("properties", {}).items():
            missing += [] if "description" in sub else [prefix + name]
            missing += undocumented(sub, f"{prefix}{name}.")
        extra = node.get("additionalProperties")
        return missing + (undocumented(extra, f"{prefix}<name>.") if isinstance(extra, dict) else [])

    assert undocumented(yaml.safe_load(SCHEMA.read_text())) == []


def test_the_gradient_only_form_is_refused_on_the_pre_ln_transformer_before_any_job(tmp_path):
    """A&Z §4: az.gradient: grad is identically zero on our Transformer; the message names the key, why and the fix."""
    result = snakemake(tmp_path, "--dry-run", "--config", "az={gradient: grad}", config=_one_dataset_config())
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "config key 'az.gradient'" in output and "identically zero" in output
    assert "az.gradient: auto" in output and not (tmp_path / "results").exists()
