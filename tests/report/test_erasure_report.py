"""The erasure tables and figures from small hand-made erasure files: the statistics the spec defines, every format."""

import numpy as np
import pandas as pd
import pytest

from attnexp import paths
from attnexp.io import write_parquet
from attnexp.report.erasure import ERASURE_FIGURE_NAMES, erasure_summary, write_erasure_figures, write_erasure_tables
from attnexp.report.style import FigureStyle

BINS = (0.01, 0.05, 0.1, 0.2, 0.5)


def write_model(folder, seed: int, shift: float = 0.0) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    ids = [f"i{k}" for k in range(4)]
    attention = pd.DataFrame(
        {
            "instance_id": ids * 2,
            "ranking": ["attention"] * 4 + ["random"] * 4,
            "n": [5, 5, 5, 1] * 2,
            "first_flip_fraction": [0.2, 0.4, np.nan, np.nan, 0.6, np.nan, np.nan, np.nan],
            "jsd_top": [0.3, 0.2, 0.1, np.nan] + [np.nan] * 4,
            "jsd_random": [0.1, 0.2, 0.0, np.nan] + [np.nan] * 4,
            "flip_top": pd.array([True, True, False, pd.NA] + [pd.NA] * 4, dtype="boolean"),
            "flip_random": pd.array([False, True, False, pd.NA] + [pd.NA] * 4, dtype="boolean"),
        }
    )
    rows = [
        (i, r, k, (0.5 if r == "attention" else 0.1) + shift, 0.2) for i in ids for r in ("attention", "random") for k in BINS
    ]
    inputs = pd.DataFrame(rows, columns=["instance_id", "ranking", "k", "comprehensiveness", "sufficiency"])
    files = {"erasure_attention": folder / "a.parquet", "erasure_input": folder / "i.parquet"}
    write_parquet(files["erasure_attention"], attention)
    write_parquet(files["erasure_input"], inputs)
    return {"dataset": "syn_sentiment", "model": "lstm-tanh", "seed": seed, **files}


@pytest.fixture
def models(tmp_path):
    return [write_model(tmp_path / "s0", 0), write_model(tmp_path / "s1", 1, shift=0.1)]


def test_summary_statistics(models):
    one = erasure_summary(models[:1]).set_index("ranking")
    assert one.loc["attention", "median_first_flip"] == pytest.approx(0.3)  # median of 0.2, 0.4 (flipping, n >= 2)
    assert one.loc["attention", "never_flip"] == pytest.approx(1 / 3)
    assert one.loc["random", "never_flip"] == pytest.approx(2 / 3)
    assert one.loc["attention", "comprehensiveness"] == pytest.approx(0.5)
    assert one.loc["attention", "comprehensiveness_low"] == pytest.approx(0.5)  # constant values: a point interval
    both = erasure_summary(models).set_index("ranking")
    assert both.loc["attention", "comprehensiveness"] == pytest.approx(0.55) and both.loc["attention", "n_seeds"] == 2
    low, high = both.loc["attention", ["comprehensiveness_low", "comprehensiveness_high"]]
    assert 0.5 <= low < high <= 0.6  # several seeds: the interval is over the seeds' means (0.5 and 0.6)
    assert both.loc["attention", "sufficiency_low"] == pytest.approx(0.2)  # both seeds 0.2: a point interval


def test_tables_and_figures_are_written(models, tmp_path):
    tables = {stem: paths.table_files("erasure", stem) for stem in ("erasure_summary", "single_weight")}
    tables = {stem: {fmt: tmp_path / p for fmt, p in files.items()} for stem, files in tables.items()}
    write_erasure_tables(models=models, outputs=tables)
    single = pd.read_csv(tables["single_weight"]["csv"]).iloc[0]
    assert single["flip_top_only"] == pytest.approx(1 / 3) and single["flip_both"] == pytest.approx(1 / 3)
    assert single["delta_jsd_mean"] == pytest.approx(0.1)
    summary = tables["erasure_summary"]["md"].read_text()
    assert "Comprehensiveness" in summary and "analyses.test_sample" in summary
    header = next(line for line in summary.splitlines() if line.startswith("| Dataset"))
    assert [c.strip() for c in header.strip("|").split("|")][:5] == [
        "Dataset",
        "Model",
        "Ranking",
        "Median first flip",
        "Never flips",
    ]
    assert pd.read_csv(tables["erasure_summary"]["csv"]).set_index("ranking").loc["attention", "n"] == 8  # 4 x 2 seeds
    figures = {name: {fmt: tmp_path / "fig" / f"{name}.{fmt}" for fmt in ("png", "pdf")} for name in ERASURE_FIGURE_NAMES}
    write_erasure_figures(models=models, outputs=figures, style=FigureStyle(palette="spec", width=3.3, dpi=50))
    assert all(path.stat().st_size > 0 for files in figures.values() for path in files.values())


def test_plan_names_the_figures_the_report_draws():
    from attnexp.report import catalog

    assert tuple(catalog.names("erasure", "figure")) == ERASURE_FIGURE_NAMES


def test_the_aopc_curves_label_the_bins_as_text(models):
    """Labels are never mathtext (report.style: text.parse_math off), so a log axis's 10^{-2} ticks printed raw
    `$\\mathdefault{...}$`: the curves step through ERASER's bins, labelled 1% ... 50%."""
    from attnexp.report.erasure import aopc_figure
    from attnexp.report.style import paper_style

    style = FigureStyle(palette="spec", width=3.3, dpi=50)
    with paper_style(style):
        figure = aopc_figure(models, style)
        figure.canvas.draw()
        labels = [t.get_text() for ax in figure.axes for t in ax.get_xticklabels()]
    assert labels[:5] == ["1%", "5%", "10%", "20%", "50%"] and not any("$" in label for label in labels)


def test_the_erasure_figures_name_their_dataset_and_keep_the_aopc_legend_off_the_curves(models, tmp_path):
    """Each figure is one dataset's (its title says which); the AOPC curves' one legend lies outside every panel
    (below them) and names the rankings of every model, not only the last panel's."""
    from attnexp.report.erasure import FIGURES
    from attnexp.report.style import paper_style

    other = write_model(tmp_path / "other", 0)
    inputs = pd.read_parquet(other["erasure_input"])
    write_parquet(other["erasure_input"], inputs.assign(ranking=inputs["ranking"].replace({"attention": "rollout"})))
    models = [models[0], {**other, "model": "transformer-dot (A&Z)"}]
    style = FigureStyle(palette="spec", width=3.3, dpi=50)
    with paper_style(style):
        for name, draw in FIGURES.items():
            figure = draw(models, style)
            assert "syn_sentiment" in figure.get_suptitle(), name
        figure.canvas.draw()  # the last: the AOPC curves
        (legend,) = figure.legends
        assert not any(ax.get_legend() for ax in figure.axes)
        box = legend.get_window_extent()
        assert not any(box.overlaps(ax.get_window_extent()) for ax in figure.axes)
        assert [t.get_text() for t in legend.get_texts()] == ["attention", "random", "rollout"]
