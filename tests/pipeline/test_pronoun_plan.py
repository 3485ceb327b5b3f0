"""A&Z Fig. 4 in the plan: one figure (PNG, PDF and its CSV) per hf.models entry of kind masked_lm or prompted and
per az.pronoun_examples entry, in the `hf` and `all` targets (not `az`), none with the default config; the examples
and the checkpoints checked before any job; the job's settings read only what it uses."""

import json
import re

import pytest

from attnexp import paths
from attnexp.config import ConfigError
from attnexp.pipeline import settings as job
from attnexp.pipeline.plan import Plan


def checkpoint(tmp_path, name: str) -> str:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    return str(folder)


def lm_config(tmp_path, **hf) -> dict:
    models = {
        "mlm": {"checkpoint": checkpoint(tmp_path, "mlm"), "kind": "masked_lm"},
        "clm": {"checkpoint": checkpoint(tmp_path, "clm"), "kind": "prompted"},
        "cls": {"checkpoint": checkpoint(tmp_path, "cls")},  # a classifier reads no pronoun example
    }
    return job.default_config(hf={"models": models, **hf})


def test_the_default_config_draws_no_pronoun_figure():
    plan = Plan.from_config(job.default_config())
    assert plan.pronoun_models == [] and plan.pronoun_targets() == []
    assert not [t for t in plan.all_targets() if "/pronouns/" in t]
    assert plan.pronoun_examples == ["author_sara", "mary_john"]  # the paper's two, as names in paths


def test_every_masked_and_causal_lm_draws_every_example_in_the_hf_target(tmp_path):
    plan = Plan.from_config(lm_config(tmp_path))
    assert plan.pronoun_models == ["mlm", "clm"]
    expected = [
        path for m in ("mlm", "clm") for e in ("author_sara", "mary_john") for path in paths.az_pronoun_files(m, e).values()
    ]
    assert plan.pronoun_targets() == expected
    assert paths.az_pronoun_files("mlm", "author_sara") == {
        "png": "results/figures/az/pronouns/mlm/author_sara.png",
        "pdf": "results/figures/az/pronouns/mlm/author_sara.pdf",
        "table": "results/figures/az/pronouns/mlm/author_sara.csv",
    }
    assert set(expected) <= set(plan.hf_targets()) and set(expected) <= set(plan.all_targets())
    assert not [t for t in plan.az_targets() if "/pronouns/" in t]  # no hf.datasets needed, no `az` target
    figures = [t for t in plan.figure_targets() if "/pronouns/" in t]
    assert figures == [t for t in expected if not t.endswith(".csv")]
    assert plan.pronoun_wildcards() == {"hf_model": "mlm|clm", "example": "author_sara|mary_john"}


def test_the_job_settings_come_back_and_read_only_their_keys(tmp_path):
    config = lm_config(tmp_path)
    settings = job.PronounSettings.from_plan(Plan.from_config(config), hf_model="clm", example="mary_john")
    assert settings.kind == "prompted" and settings.example["sentence"] == "Mary convinced John of [MASK] love."
    assert settings.example["referents"] == ["Mary", "John"] and settings.example["candidates"] == ["his", "her"]
    assert job.PronounSettings.from_param(settings.as_param()) == settings
    assert json.loads(json.dumps(settings.as_param())) == settings.as_param()  # plain data for Snakemake's rerun check
    for az, changes in (({"gradient": "grad_l2"}, False), ({"flow_solver": "networkx"}, True)):
        after = job.PronounSettings.from_plan(
            Plan.from_config(job.default_config(hf=config["hf"], az=az)), hf_model="clm", example="mary_john"
        )
        assert (after.as_param() != settings.as_param()) == changes, az


@pytest.mark.parametrize(
    ("examples", "expected"),
    [
        ([{"name": "a", "sentence": "no mask", "candidates": ["x", "y"]}], "holds [MASK] 0 times"),
        ([{"name": "a", "sentence": "x [MASK]", "candidates": ["x", "y"], "referents": ["z"]}], "'z' is not a word"),
        ([{"name": "a", "sentence": "x [MASK]", "candidates": ["x", "y"]}] * 2, "name 'a' given to more than one"),
        ([{"name": "a", "sentence": "[MASK] loves x", "candidates": ["x", "y"]}], "read only the text before it"),
        ([{"name": "a b", "sentence": "x [MASK]", "candidates": ["x", "y"]}], "does not match"),
        (
            [{"name": "a", "sentence": "x [MASK]", "candidates": ["x"]}],
            "'az.pronoun_examples[0].candidates' has 1 value(s); list at least 2",
        ),
    ],
)
def test_a_bad_example_is_refused_before_any_job(tmp_path, examples, expected):
    with pytest.raises(ConfigError, match=re.escape(expected)):
        job.default_config(az={"pronoun_examples": examples}, hf=lm_config(tmp_path)["hf"])


def test_a_missing_checkpoint_is_refused_without_hf_datasets(tmp_path):
    """The stage's checkpoint check runs only with hf.datasets; a pronoun LM is read without any."""
    models = {"mlm": {"checkpoint": str(tmp_path / "absent"), "kind": "masked_lm"}}
    with pytest.raises(ConfigError, match="hf.models.mlm"):
        job.default_config(hf={"models": models})
    job.default_config(hf={"models": {"cls": {"checkpoint": str(tmp_path / "absent")}}})  # a classifier: not read
