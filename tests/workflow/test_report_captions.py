"""The report's captions of the analyses' tables and figures say how many test instances they used: every one,
or the seeded sample of `analyses.test_sample`, rendered as Snakemake renders a caption (Jinja, then docutils)."""

from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils.core import publish_parts
from jinja2 import Environment

from attnexp.pipeline.settings import default_config

CAPTIONS = Path(__file__).resolve().parents[2] / "workflow" / "report"
ANALYSED = [
    *[f"jw/{name}" for name in ("table2_kendall", "cross_measure", "rationale_recovery", "permutation_violin")],
    *[f"jw/{name}" for name in ("adversary_hist", "tau_hist_attn_grad", "kendall_bars_gradient", "model_figure")],
    *[f"erasure/{name}" for name in ("erasure_summary", "single_weight", "aopc_curves", "first_flip")],
]


class Named:
    """Wildcards and params of a job: each one's value is its name."""

    def __getattr__(self, name: str) -> str:
        return name


def rendered(name: str, config: dict, **wildcards: str) -> str:
    """The caption's HTML body as the report shows it (snakemake.report: Jinja with these options, then docutils)."""
    env = Environment(trim_blocks=True, lstrip_blocks=True)
    named = Named()
    named.__dict__.update(wildcards)
    snakemake = SimpleNamespace(config=config, wildcards=named, params=Named())
    text = env.from_string((CAPTIONS / f"{name}.rst").read_text()).render(snakemake=snakemake)
    return publish_parts(text, writer="html", settings_overrides={"report_level": 2, "halt_level": 3})["body"]


@pytest.mark.parametrize("name", ANALYSED)
def test_a_caption_names_the_sample_or_the_whole_test_set(name):
    sampled = rendered(name, default_config(analyses={"test_sample": {"n": 150, "seed": 4}}))
    assert "a seeded sample of at most 150 test instances per model" in sampled and "seed 4" in sampled
    everything = rendered(name, default_config())
    assert "every test instance of each model" in everything and "sample of at most" not in everything
    assert "{%" not in sampled + everything and "{{" not in sampled + everything


def test_every_caption_with_the_sample_sentence_is_checked():
    mentioned = {str(p.relative_to(CAPTIONS).with_suffix("")) for p in CAPTIONS.rglob("*.rst") if "test_sample" in p.read_text()}
    assert set(ANALYSED) <= mentioned
    for name in sorted(mentioned):
        assert "every test instance" in rendered(name, default_config()) or name == "jw/table1_datasets", name


@pytest.mark.parametrize("name", sorted(str(p.relative_to(CAPTIONS).with_suffix("")) for p in CAPTIONS.rglob("*.rst")))
def test_every_caption_renders_without_a_docutils_error(name):
    """A `|...|` in a caption is an RST substitution reference: undefined, the report printed docutils' error
    message in its place (table2_kendall's |⟨∂ŷ/∂e_t, e_t⟩| did)."""
    assert "System Message" not in rendered(name, default_config())


@pytest.mark.parametrize("name", ["wp/variance_violin", "wp/variance_scatter"])
def test_the_wp_variance_captions_name_what_is_compared_and_on_which_instances(name):
    """The adversary's variance figures cover the sample J&W's adversary ran on; the seeds' the whole test split.
    (The captions read an undefined `params.compared` before and printed "compared: )".)"""
    sampled = default_config(analyses={"test_sample": {"n": 80, "seed": 0}})
    adversary = rendered(name, sampled, dataset="sst", kind="adv")
    assert "compared: J&amp;W's per-instance adversary runs" in adversary and "at most 80 test instances" in adversary
    seeds = rendered(name, sampled, dataset="sst", kind="seed")
    assert "compared: the extra seeds" in seeds and "every test instance" in seeds and "at most" not in seeds
