"""The J&W tables and figures as a workflow: every target from contract-shaped analysis files, each figure made by
exactly one rule (no rule order), a figure outside the aggregate targets drawn alone, and the HTML report."""

import json

import numpy as np
import pytest

from attnexp import paths
from tests.fakes import write_fake_dataset, write_fake_model
from tests.workflow.helpers import snakemake, tiny_config

FIGURE_RULES = [
    "table1",
    "table2",
    "cross_measure_table",
    "rationale_table",
    "paper_comparison",
    "paper_comparison_page",
    "dataset_figures",
    "model_figure",
    "summary_figures",
    "summary_figure",
    "erasure_tables",
    "erasure_figures",
    "tables",
    "figures",
    "report",
]
DATASETS = {"syn_sentiment": ("bc", ["0", "1"]), "syn_babi1": ("qa", [f"p{i}" for i in range(6)])}


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """A workdir whose analyses are fakes (the stages before are not allowed to run), after `tables figures`."""
    workdir = tmp_path_factory.mktemp("figures_workflow")
    rng = np.random.default_rng(11)
    for dataset, (task, classes) in DATASETS.items():
        meta, instances = write_fake_dataset(workdir, dataset, task, classes, rng, n=20)
        for encoder in ("lstm", "average"):
            write_fake_model(workdir, dataset, encoder, "tanh", 0, meta, instances, rng)
    config = tiny_config(datasets=list(DATASETS), encoders=["lstm", "average"], attentions=["tanh"])
    config["figures"] = {"dpi": 50, "examples": 1, "models": ["lstm-tanh"], "bootstrap": {"n_resamples": 200}}
    config["wp"]["datasets"], config["az"]["datasets"] = [], []  # J&W only: `tables` and `figures` span all papers
    result = snakemake(workdir, "--allowed-rules", *FIGURE_RULES, "--", "tables", "figures", config=config)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return workdir


@pytest.mark.slow
def test_every_table_and_figure_exists(drawn):
    for stem in ("table1_datasets", "table2_kendall", "cross_measure", "rationale_recovery"):
        for path in paths.table_files("jw", stem).values():
            assert (drawn / path).stat().st_size > 0
    comparison = paths.paper_comparison_files()  # generated data only: a valid table with no rows
    assert (drawn / comparison["csv"]).read_text().startswith("paper,table,page,source,dataset")
    assert "(no rows)" in (drawn / comparison["md"]).read_text()
    page = (drawn / paths.paper_comparison_page_files()["md"]).read_text()  # the results page says so, and what made it
    assert "no rows" in page and "- Datasets the grid ran: syn_sentiment, syn_babi1." in page
    assert f"Snakefile {paths.paper_comparison_page_files()['md']}`" in page  # -s <the Snakefile>: run from elsewhere
    pngs = sorted(drawn.glob("results/figures/jw/**/*.png"))
    assert len(pngs) == len(DATASETS) * 9 + 3
    for png in pngs:
        assert png.stat().st_size > 0 and png.with_suffix(".pdf").stat().st_size > 0
    for dataset in DATASETS:
        assert (drawn / paths.figure_manifest("jw", dataset)).exists()
        assert (drawn / paths.jw_model_figure_files(dataset, "lstm", "tanh", 0, "tau_densities")["png"]).exists()
    assert (drawn / paths.jw_summary_figure_files("tanh", "kendall_differences")["pdf"]).exists()
    assert (drawn / "logs/figures/jw/syn_babi1.log").exists()


def jobs_of(dry) -> set[str]:
    """The rules of a dry run's job table."""
    assert dry.returncode == 0, dry.stderr[-3000:]
    table = dry.stdout[dry.stdout.index("Job stats") :].split("\ntotal")[0]
    return {line.split()[0] for line in table.splitlines()[3:] if line.strip()}


def mtimes(workdir):
    return {p: p.stat().st_mtime_ns for p in workdir.glob("results/**/*.*")}


def changed_since(before) -> list[str]:
    return [p.name for p, mtime in before.items() if p.exists() and p.stat().st_mtime_ns != mtime]


@pytest.mark.slow
def test_a_figure_outside_the_aggregate_targets_is_drawn_alone(drawn):
    files = paths.jw_model_figure_files("syn_babi1", "average", "tanh", 0, "adversary_violin")
    before = mtimes(drawn)
    jobs = jobs_of(snakemake(drawn, "--allowed-rules", *FIGURE_RULES, "--dry-run", "--", files["pdf"]))
    assert jobs == {"model_figure"}
    assert snakemake(drawn, "--allowed-rules", *FIGURE_RULES, "--", files["pdf"]).returncode == 0
    assert (drawn / files["pdf"]).read_bytes()[:4] == b"%PDF" and (drawn / files["png"]).exists()
    assert changed_since(before) == []


@pytest.mark.slow
def test_a_deleted_aggregate_figure_is_redrawn_by_its_dataset_job_only(drawn):
    target = drawn / paths.jw_model_figure_files("syn_babi1", "lstm", "tanh", 0, "adversary_violin")["pdf"]
    target.unlink()
    jobs = jobs_of(snakemake(drawn, "--allowed-rules", *FIGURE_RULES, "--dry-run", "--", str(target.relative_to(drawn))))
    assert jobs == {"dataset_figures"}
    summary = paths.jw_summary_figure_files("dot", "kendall_bars_loo")["png"]  # dot is not in the grid
    assert jobs_of(snakemake(drawn, "--allowed-rules", *FIGURE_RULES, "--dry-run", "--", summary)) == {"summary_figure"}


@pytest.mark.slow
def test_report_groups_by_paper_dataset_and_model(drawn):
    result = snakemake(drawn, "--allowed-rules", *FIGURE_RULES, "--", "report")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    html = (drawn / paths.REPORT).read_text()
    for text in ("Jain &amp; Wallace", "All datasets", "syn_babi1", "lstm-tanh seed 0", "Table 2: Kendall"):
        assert text in html or text.replace("&amp;", "&") in html, text
    line = next(line for line in html.splitlines() if "var categories = " in line)
    categories = json.loads(line.split("var categories = ", 1)[1].strip().rstrip(";"))
    assert sorted(categories) == [
        "1. Jain & Wallace (2019)",
        "4. Erasure tests: Serrano & Smith (2019), ERASER (2020)",
        "5. All papers: ours vs published",
    ]
    sections = categories["1. Jain & Wallace (2019)"]
    assert sorted(sections) == ["0. All datasets", "1. syn_sentiment", "2. syn_babi1"]  # the papers' order
    entries = [path for section in sections.values() for path in section]
    tables = [path for path in entries if "/tables/" in path]
    assert len(tables) == 4 and all(path.endswith(".html") for path in tables)  # shown inline, not downloaded
