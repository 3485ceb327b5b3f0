"""The comparison's results page (`paper-comparison.md`) from a small comparison table: one table per paper, every
row's reasons by number, a fallback dataset flagged, the test sample named, the provenance, and the same bytes for
the same inputs. Nothing here compares ours with a published number."""

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import yaml

from attnexp import paths
from attnexp.io import write_csv, write_json, write_yaml
from attnexp.pipeline.report import analysed_sample
from attnexp.report import comparison
from attnexp.report.comparison_page import Provenance, build_comparison_page, read_comparison, render
from tests.fakes import fake_analyses, fake_instances

AGNEWS_NOTE = "fallback for a missing train.csv; not the paper's AG News"  # the registry's note, with a ";"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
PAGE_CODE = {"package": "1.2.3", "commit": "fedcba9876543210fedcba9876543210fedcba98", "dirty": True}
PROVENANCE = Provenance(
    configfiles=("config/paper.yaml", "my paths.yaml"),
    config_args=("seeds=[0, 1, 2]",),
    datasets=("sst", "agnews_testonly"),
    config_changes={"datasets": ["sst", "agnews_testonly"], "seeds": [0, 1, 2], "analyses": {"ig_steps": 7}},
    code=PAGE_CODE,
)
METAS = {
    "sst": {"dataset": "sst", "task": "bc", "classes": ["0", "1"], "comparable": True, "note": "", "sizes": {"test": 1821}},
    "agnews_testonly": {
        "dataset": "agnews_testonly",
        "task": "bc",
        "classes": ["0", "1"],
        "comparable": False,
        "note": AGNEWS_NOTE,
        "sizes": {"test": 40},
    },
}


def run_config(embeddings: str = "random", split: str = "dev") -> dict:
    return {"embeddings": embeddings, "model_selection": {"split": split}}


def model(dataset: str, seed: int, value: float, kendall=None) -> dict:
    return {
        "dataset": dataset,
        "encoder": "lstm",
        "attention": "tanh",
        "seed": seed,
        "metrics": {"f1_positive": value},
        "config": run_config(),
        "kendall": kendall,
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The comparison CSV of SST (three seeds, τ per class) and AG News' fallback (one seed), W&P's uniform run on
    SST, and the meta.json and run config.yaml the page reads."""
    folder = tmp_path_factory.mktemp("comparison_page")
    rng = np.random.default_rng(3)
    instances = fake_instances(30, 2, rng)
    models = [model("sst", s, v, fake_analyses(instances, 2, rng)["kendall"]) for s, v in enumerate([0.70, 0.74, 0.78])]
    models.append(model("agnews_testonly", 0, 0.9))
    wp_runs = [{"dataset": "sst", "variant": "uniform", "seed": 10, "metrics": {"f1_positive": 0.79}, "config": run_config()}]
    per_seed = pd.concat([comparison.jw_per_seed(models, METAS), comparison.wp_per_seed(wp_runs, METAS)], ignore_index=True)
    table = comparison.comparison(per_seed, comparison.published_values(), {"n_resamples": 200, "seed": 0})
    write_csv(folder / "paper_comparison.csv", table)
    metas, configs = [], []
    for name, meta in METAS.items():
        metas.append(folder / f"{name}_meta.json")
        write_json(metas[-1], {**meta, "code_version": {"package": "1.2.3", "commit": COMMIT, "dirty": False}})
    for i in range(4):
        configs.append(folder / f"run{i}_config.yaml")
        dirty = i == 3  # one run from a tree with uncommitted changes
        version = {"package": "1.2.3", "commit": COMMIT, "dirty": dirty}
        write_yaml(configs[-1], {**run_config(), "code_version": version})
    return {"table": folder / "paper_comparison.csv", "metas": metas, "configs": configs}


def build(files, folder, test_sample=None) -> str:
    outputs = {"md": folder / "paper-comparison.md", "html": folder / "paper-comparison.html"}
    return build_comparison_page(**files, outputs=outputs, provenance=PROVENANCE, test_sample=test_sample)


@pytest.fixture(scope="module")
def page(files, tmp_path_factory) -> str:
    return build(files, tmp_path_factory.mktemp("page"))


def reasons_of(page: str) -> dict[int, str]:
    section = page.split("## Why the settings differ\n\n")[1].split("\n\n")[0]
    return {int(n): text for n, text in (line.split(". ", 1) for line in section.splitlines())}


def rows_of(page: str, section: str) -> list[list[str]]:
    """The cells of the Markdown table under `## {section}`."""
    text = page.split(f"## {section}\n\n")[1].split("\n\n")[0]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines()[2:]]


def test_each_paper_has_its_table_with_ours_beside_the_published_value(page, files):
    table = read_comparison(files["table"])
    assert set(table["paper"]) == {"jw", "wp"} and (table["dataset"] == "agnews_testonly").any()
    assert "## Jain & Wallace 2019" in page and "## Wiegreffe & Pinter 2019" in page
    assert "## Abnar & Zuidema 2020" not in page  # no A&Z rows
    jw = rows_of(page, "Jain & Wallace 2019")
    assert len(jw) == (table["paper"] == "jw").sum()
    sst = next(r for r in jw if r[1] == "sst" and r[3] == "test performance")
    assert sst[5].startswith("0.740 [") and sst[5].endswith("(n=3)") and sst[6] == "0.810" and sst[7] == "-0.070"


def test_every_difference_has_its_reason_and_a_fallback_note_stays_one_reason(page):
    reasons = reasons_of(page)
    texts = list(reasons.values())
    assert "random instead of pretrained embeddings (paper: fasttext_simple)" in texts
    assert "mean of 3 seeds (paper: one run)" in texts and "model selected on dev (paper: test set)" in texts
    fallback = "fallback dataset agnews_testonly: fallback for a missing train.csv, not the paper's AG News"
    assert fallback in texts and not any(t.startswith("not the paper's") for t in texts)
    jw = rows_of(page, "Jain & Wallace 2019")
    agnews = next(r for r in jw if r[1] == "agnews_testonly")
    named = {reasons[int(n)] for n in agnews[-1].split(", ")}
    assert fallback in named and "mean of 3 seeds (paper: one run)" not in named
    for row in [*jw, *rows_of(page, "Wiegreffe & Pinter 2019")]:  # every number on a row is a listed reason
        assert row[-1] == "–" or all(int(n) in reasons for n in row[-1].split(", "))


def test_the_fallback_reason_joins_no_separator_of_its_own():
    """The registry's notes contain "; ", the separator of the comparison's reasons: the page would have split one
    reason in two (a fix; fails on the code before it)."""
    text = comparison.reason("jw", "agnews_testonly", 1, {"random"}, {"test"}, AGNEWS_NOTE)
    parts = text.split(comparison.REASON_SEPARATOR)
    assert parts[0] == "fallback dataset agnews_testonly: fallback for a missing train.csv, not the paper's AG News"


def test_the_datasets_are_listed_with_a_fallback_flagged(page):
    datasets = {row[0]: row for row in rows_of(page, "Datasets")}
    assert datasets["agnews_testonly"][1:4] == ["agnews", "**no** (fallback)", "40"]
    assert datasets["agnews_testonly"][4] == AGNEWS_NOTE
    assert datasets["sst"][1:4] == ["sst", "yes", "1821"]


def test_the_provenance_names_the_command_config_and_commits(page):
    target = paths.paper_comparison_page_files()["md"]
    command = f"snakemake --cores all {target} --configfile config/paper.yaml 'my paths.yaml' --config 'seeds=[0, 1, 2]'"
    assert f"- Command: `{command}`" in page
    files = "`config/config.yaml` (the workflow's), then `config/paper.yaml`, then `my paths.yaml`"
    assert f"- Config: {files}, then the `--config` values `seeds=[0, 1, 2]`, each over the ones before" in page
    assert f"```sh\n{command}\ncp {paths.paper_comparison_page_files()['md']} {paths.COMPARISON_DOC}\n```" in page
    assert f"commit `{COMMIT}` (5 files), commit `{COMMIT}` with uncommitted changes (1 file)" in page
    assert f"Code of this page: commit `{PAGE_CODE['commit']}` with uncommitted changes." in page
    config = yaml.safe_load(page.split("```yaml\n")[1].split("```")[0])
    assert config == PROVENANCE.config_changes
    assert "Datasets the grid ran: sst, agnews_testonly." in page


def test_the_page_is_the_same_bytes_for_the_same_inputs(files, page, tmp_path):
    for copy in ("a", "b"):
        (tmp_path / copy).mkdir()
        assert build(files, tmp_path / copy) == page
    for name in ("paper-comparison.md", "paper-comparison.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "paper-comparison.md").read_bytes() == page.encode()
    html = (tmp_path / "a" / "paper-comparison.html").read_text()
    assert "<h2>Jain &amp; Wallace 2019</h2>" in html and "<table>" in html and "**no**" not in html
    assert not re.search(r"20\d\d-\d\d-\d\d", page)  # no date: nothing from the clock


def test_a_test_sample_is_named_once_beside_the_dataset(files, tmp_path):
    page = build(files, tmp_path, test_sample=(200, 5))
    assert {row[0]: row[3] for row in rows_of(page, "Datasets")}["sst"] == "1821 (J&W analyses: 200)"
    assert {row[0]: row[3] for row in rows_of(page, "Datasets")}["agnews_testonly"] == "40"  # fewer than 200 test rows


def test_an_empty_comparison_still_says_what_made_it(tmp_path):
    write_csv(tmp_path / "empty.csv", pd.DataFrame(columns=comparison.COLUMNS))
    page = render(read_comparison(tmp_path / "empty.csv"), metas={}, provenance=PROVENANCE)
    assert "no rows" in page and "## Why the settings differ" not in page
    assert "--configfile config/paper.yaml" in page and "Code of the compared runs and datasets: not recorded." in page
    replacing = replace(PROVENANCE, replace_workflow_config=True)
    replaced = render(read_comparison(tmp_path / "empty.csv"), metas={}, provenance=replacing)
    assert "--replace-workflow-config --configfile" in replaced and "the workflow's" not in replaced


@pytest.mark.parametrize(("sample", "expected"), [({"n": None, "seed": 0}, None), ({"n": 300, "seed": 4}, (300, 4))])
def test_the_test_sample_setting_is_read(sample, expected):
    assert analysed_sample({"test_sample": sample}) == expected


def test_the_page_lists_each_stages_datasets_and_flags_a_generated_substitute(tmp_path):
    """Issue 38 §4: the W&P and A&Z datasets join the J&W grid's in "Datasets the grid ran"; the generated agreement
    task, standing for A&Z's Linzen corpus, is flagged generated (not a fallback), with its A&Z section."""
    summary = pd.DataFrame(
        [{"task": "syn_agreement", "method": "flow", "importance": "blankout", "layer": 1, "mean": 0.3, "std": 0.1, "n": 20}]
    )
    runs = [{"dataset": "syn_agreement", "seed": 0, "summary": summary, "model": "transformer-self", "gradient": "grad_x_input"}]
    meta = {
        "dataset": "syn_agreement",
        "task": "bc",
        "classes": ["0", "1"],
        "comparable": False,
        "note": "",
        "sizes": {"test": 20},
    }
    table = comparison.comparison(comparison.az_per_seed(runs, {"syn_agreement": meta}), comparison.published_values())
    write_csv(tmp_path / "az.csv", table)
    stages = replace(PROVENANCE, stage_datasets={"wp": ["sst", "imdb"], "az": ["syn_agreement"]})
    page = render(read_comparison(tmp_path / "az.csv"), metas={"syn_agreement": meta}, provenance=stages)
    assert "- Datasets the grid ran: sst, agnews_testonly; W&P: sst, imdb; A&Z: syn_agreement." in page
    assert "## Abnar & Zuidema 2020" in page and "## Jain & Wallace 2019" not in page
    rows = rows_of(page, "Abnar & Zuidema 2020")
    assert len(rows) == 2 and {r[1] for r in rows} == {"syn_agreement"} and {r[2] for r in rows} == {"transformer-self"}
    assert {row[0]: row[1:3] for row in rows_of(page, "Datasets")}["syn_agreement"] == ["linzen_agreement", "**no** (generated)"]
    assert any(
        t.startswith("generated data syn_agreement instead of the paper's linzen_agreement") for t in reasons_of(page).values()
    )
    assert "Datasets the grid ran: none." in render(read_comparison(tmp_path / "az.csv"), metas={}, provenance=Provenance())
