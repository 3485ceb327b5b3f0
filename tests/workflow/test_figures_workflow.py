"""The figures stage as a workflow: every target from contract-shaped analysis files, and one figure regenerated alone."""

import numpy as np
import pytest

from tests.fakes import write_fake_dataset, write_fake_model
from tests.workflow.helpers import snakemake, tiny_config

FIGURE_RULES = [
    "table1",
    "table2",
    "cross_measure_table",
    "rationale_table",
    "dataset_figures",
    "model_figure",
    "summary_figures",
    "summary_figure",
    "tables",
    "figures",
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
    result = snakemake(workdir, "--allowed-rules", *FIGURE_RULES, "--", "tables", "figures", config=config)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return workdir


@pytest.mark.slow
def test_every_table_and_figure_exists(drawn):
    for stem in ("table1_datasets", "table2_kendall", "cross_measure", "rationale_recovery"):
        for suffix in ("csv", "md", "tex"):
            assert (drawn / "results/tables" / f"{stem}.{suffix}").stat().st_size > 0
    pngs = sorted(drawn.glob("results/figures/**/*.png"))
    assert len(pngs) == len(DATASETS) * 9 + 3
    for png in pngs:
        assert png.stat().st_size > 0 and png.with_suffix(".pdf").stat().st_size > 0
    assert (drawn / "logs/figures/syn_babi1.log").exists()


@pytest.mark.slow
def test_deleting_one_figure_reruns_only_that_figure(drawn):
    target = drawn / "results/figures/syn_babi1/lstm-tanh/seed0/adversary_violin.pdf"
    others = {p: p.stat().st_mtime_ns for p in drawn.glob("results/**/*.*") if p.with_suffix(".pdf") != target}
    target.unlink()
    relative = str(target.relative_to(drawn))
    dry = snakemake(drawn, "--allowed-rules", *FIGURE_RULES, "--dry-run", "--", relative)
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = dry.stdout[dry.stdout.index("Job stats") :].split("total")[0]
    assert "model_figure" in jobs and "dataset_figures" not in jobs and "table" not in jobs
    assert snakemake(drawn, "--allowed-rules", *FIGURE_RULES, "--", relative).returncode == 0
    assert target.read_bytes()[:4] == b"%PDF"
    changed = [p for p, mtime in others.items() if p.exists() and p.stat().st_mtime_ns != mtime and ".snakemake" not in str(p)]
    assert [p.name for p in changed if p.suffix in (".png", ".pdf", ".csv", ".md", ".tex", ".json")] == []
