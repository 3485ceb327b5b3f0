"""W&P tables (CSV full precision + rounded Markdown/LaTeX) and figures (PNG + PDF) from run-shaped inputs."""

import numpy as np
import pandas as pd
import pytest

from attnexp.io import write_json, write_parquet
from attnexp.paths import table_files
from attnexp.report import wp
from attnexp.report.style import FigureStyle

PER_CLASS = {"0": {"f1": 0.5}, "1": {"f1": 0.5}}


def metrics(dataset: str, variant: str, f1: float, **extra) -> dict:
    return {
        "dataset": dataset,
        "variant": variant,
        "seed": 10,
        "f1_positive": f1,
        "accuracy": f1 - 0.01,
        "f1_macro": f1 - 0.02,
        "roc_auc": 0.987654321,
        "pr_auc": 0.9,
        "n": 200,
        "best_epoch": 1,
        "per_class": PER_CLASS,
        **extra,
    }


def outputs(root, stem: str) -> dict[str, str]:
    return {fmt: str(root / path) for fmt, path in table_files("wp", stem).items()}


def write_all(root, records: list[dict]) -> list[str]:
    files = []
    for index, record in enumerate(records):
        files.append(str(root / f"m{index}.json"))
        write_json(files[-1], record)
    return files


def test_uniform_table_keeps_full_precision_in_csv_and_rounds_markdown_and_latex(tmp_path):
    base = write_all(tmp_path / "base", [metrics("imdb", "base", 0.9123456789), metrics("sst", "base", 0.8)])
    uniform = write_all(tmp_path / "uniform", [metrics("imdb", "uniform", 0.9), metrics("sst", "uniform", 0.7)])
    reported = tmp_path / "reported.csv"
    pd.DataFrame({"dataset": ["imdb"], "f1": [0.89]}).to_csv(reported, index=False)
    files = outputs(tmp_path, "uniform_table")
    table = wp.write_uniform_table(base_metrics=base, uniform_metrics=uniform, reported=str(reported), outputs=files)
    assert list(table["dataset"]) == ["imdb", "sst"] and table["jw_reported_f1"].isna().tolist() == [False, True]
    csv = pd.read_csv(files["csv"])
    assert csv["f1_positive_reproduced"].iloc[0] == 0.9123456789
    markdown, latex = (open(files[k]).read() for k in ("md", "tex"))
    for text in (markdown, latex):
        assert "0.912" in text and "0.9123" not in text and "0.988" in text
    assert "–" in markdown and "--" in latex and r"\begin{tabular}" in latex


def test_diagnostic_table_has_one_row_per_guide_in_paper_order(tmp_path):
    records = [metrics("sst", v, f1) for v, f1 in (("mlp_adv", 0.6), ("mlp_base", 0.9), ("mlp_uniform", 0.8))]
    files = outputs(tmp_path, "diagnostic_table")
    table = wp.write_diagnostic_table(metrics=write_all(tmp_path, records), outputs=files)
    assert list(table["guide"]) == ["Uniform", "Base LSTM", "Adversary"]
    assert list(table.columns) == ["guide", "sst"]
    assert "Base LSTM" in open(files["md"]).read()


def test_adversarial_table_sorts_by_dataset_and_lambda_next_to_the_base_f1(tmp_path):
    extra = {"mean_tvd": 0.1, "mean_jsd": 0.4, "aggregation": "mean", "epochs_run": 3}
    adversaries = [metrics("sst", "adversarial", 0.7, **{"lambda": lam}, **extra) for lam in (10.0, 0.1)]
    files = outputs(tmp_path, "adversarial_table")
    table = wp.write_adversarial_table(
        adversary_metrics=write_all(tmp_path / "adv", adversaries),
        base_metrics=write_all(tmp_path / "base", [metrics("sst", "base", 0.95)]),
        outputs=files,
    )
    assert list(table.columns) == wp.ADVERSARIAL_COLUMNS
    assert list(table["lambda"]) == [0.1, 10.0] and (table["base_f1"] == 0.95).all()
    assert wp.display(pd.DataFrame({"lambda": [0.0001, 10.0], "f1": [0.12345, np.nan]})).to_dict("list") == {
        "λ": ["0.0001", "10"],
        "F1": ["0.123", "–"],
    }


def test_points_table_csv_is_the_points_file_as_written_by_the_analysis(tmp_path):
    points = pd.DataFrame(
        {
            "dataset": "sst",
            "model": ["seed", "uniform", "adversary", "jw_adversary"],
            "label": ["50", "uniform", "0.001", "per-instance"],
            "jsd": [0.09077575768412251, 0.5, 0.37983266539503924, 0.47],
            "tvd": [0.03711338159846491, 0.04, 0.04551040310427197, 0.0085],
            "n": [200, 200, 200, 200],
        }
    )
    write_parquet(tmp_path / "points.parquet", points)
    files = outputs(tmp_path, "sst/jsd_tvd_points")
    wp.write_points_table(points=tmp_path / "points.parquet", dataset="sst", outputs=files)
    assert open(files["csv"]).read() == points.to_csv(index=False)


@pytest.fixture
def variance() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 60
    return pd.DataFrame(
        {
            "instance_id": [f"i{k}" for k in range(n)],
            "attn_diff": rng.uniform(0, 0.6, n),
            "y_diff": rng.uniform(0, 1, n),
            "max_attn": rng.uniform(0, 1, n),
            "class": rng.integers(0, 2, n),
        }
    )


@pytest.mark.parametrize("palette", ["spec", "okabe_ito"])
def test_figures_are_written_as_png_and_pdf(tmp_path, variance, palette):
    write_parquet(tmp_path / "variance.parquet", variance)
    violin = [tmp_path / "violin.png", tmp_path / "violin.pdf"]
    scatter = [tmp_path / "scatter.png", tmp_path / "scatter.pdf"]
    style = {"style": FigureStyle(palette=palette, width=3.0, dpi=40)}
    wp.draw_variance_figures(
        variance=tmp_path / "variance.parquet", violin=violin, scatter=scatter, compared="seeds", title="sst", **style
    )
    points = pd.DataFrame(
        {
            "model": ["seed", "uniform", "adversary", "adversary", "jw_adversary"],
            "label": ["50", "uniform", "0.1", "1", "per-instance"],
            "jsd": [0.1, 0.5, 0.4, 0.69, 0.47],
            "tvd": [0.03, 0.04, 0.05, 0.4, 0.01],
        }
    )
    write_parquet(tmp_path / "points.parquet", points)
    plane = [tmp_path / "jsd_tvd.png", tmp_path / "jsd_tvd.pdf"]
    wp.draw_jsd_tvd_figure(points=tmp_path / "points.parquet", paths=plane, title="sst", **style)
    for path in [*violin, *scatter, *plane]:
        assert path.stat().st_size > 1000, path
    assert not list(tmp_path.glob("*.tmp"))


def test_a_single_predicted_class_still_draws(tmp_path, variance):
    one_class = variance.assign(**{"class": 1})
    figure = wp.seed_violin(one_class)
    assert figure.axes[0].get_legend() is None


def test_the_variance_scatter_fits_its_y_axis_to_small_output_differences():
    rng = np.random.default_rng(0)
    small = pd.DataFrame({"attn_diff": rng.uniform(0, 0.69, 50), "y_diff": rng.uniform(0, 0.012, 50), "class": 0})
    bottom, top = wp.seed_scatter(small).axes[0].get_ylim()
    assert 0.012 < top < 0.02 and -0.001 < bottom < 0  # the points span the axis, not its bottom 1%
    large = small.assign(y_diff=np.linspace(0, 0.9, 50))
    assert wp.seed_scatter(large).axes[0].get_ylim() == pytest.approx((-0.05, 1.05))  # W&P's axis


def test_the_jsd_axes_reach_past_ln2_so_the_crowded_points_stay_off_the_frame():
    """The adversaries' JSDs crowd at the maximum, ln 2 ≈ 0.693 (natural log): an axis cut at 0.7 put them on the
    frame. The violin, the scatter and the JSD-TVD plane end 4% beyond ln 2, and no scatter marker is clipped."""
    from attnexp.report.style import paper_style

    near = pd.DataFrame(
        {
            "attn_diff": np.linspace(0.6, 0.693, 40),
            "y_diff": np.linspace(0, 0.9, 40),
            "max_attn": np.linspace(0, 1, 40),
            "class": [0, 1] * 20,
        }
    )
    points = pd.DataFrame({"model": ["seed", "adversary"], "label": ["1", "0.1"], "jsd": [0.1, 0.693], "tvd": [0.01, 0.02]})
    with paper_style():
        scatter = wp.seed_scatter(near, "adversary")
        figures = [wp.seed_violin(near, "adversary"), scatter, wp.jsd_tvd_figure(points)]
        for figure in figures:
            assert figure.axes[0].get_xlim()[1] > 0.693 + 0.02
        ax = scatter.axes[0]
        scatter.canvas.draw()
        markers = ax.collections[0]
        centres = ax.transData.transform(markers.get_offsets())
        radius = np.sqrt(markers.get_sizes().max()) / 2 * scatter.dpi / 72  # sizes: points², diameter sqrt(s)
        assert (centres[:, 0] + radius < ax.bbox.x1).all() and (centres[:, 0] - radius > ax.bbox.x0).all()
