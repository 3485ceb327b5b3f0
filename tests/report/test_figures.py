"""Every figure renders a non-empty PNG of the expected size and a PDF, from contract-shaped analysis tables."""

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from attnexp import paths
from attnexp.io import write_csv
from attnexp.pipeline.settings import FigureLook
from attnexp.report import style
from attnexp.report.catalog import MODEL_FIGURE_TABLES, SUMMARY_FIGURE_NAMES
from attnexp.report.heatmap import layout_words
from attnexp.report.jw import tables
from attnexp.report.jw.adversary import pick_examples
from attnexp.report.jw.data import FigureOptions
from attnexp.report.jw.render import MODEL_FIGURES, SUMMARY_FIGURES, render_model_figures, render_summary_figures
from tests.fakes import write_fake_dataset, write_fake_model

OPTIONS = FigureOptions(palette="spec", width=3.0, dpi=40, examples=2, example_max_tokens=12)
DATASETS = {"syn_sentiment": ("bc", ["0", "1"]), "syn_babi1": ("qa", [f"p{i}" for i in range(6)])}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("figures")
    rng = np.random.default_rng(5)
    models = []
    for dataset, (task, classes) in DATASETS.items():
        meta, instances = write_fake_dataset(root, dataset, task, classes, rng, n=30)
        for encoder in ("lstm", "average"):
            folder = write_fake_model(root, dataset, encoder, "tanh", 0, meta, instances, rng)
            models.append({"dataset": dataset, "encoder": encoder, "attention": "tanh", "seed": 0, "folder": folder})
    return root, models


def model_entry(root, model, names, out):
    """A model as the workflow passes it: labels, analysis tables, and a {png, pdf} path per figure."""
    tables = {t: model["folder"] / f"{t}.parquet" for t in ("importance", "kendall", "permutation", "adversary")}
    tables["instances"] = root / "results/preprocessed" / model["dataset"] / "instances.parquet"
    labels = {k: model[k] for k in ("dataset", "encoder", "attention", "seed")}
    figures = {
        name: {fmt: out / path for fmt, path in paths.jw_model_figure_files(**labels, name=name).items()} for name in names
    }
    return labels | tables | {"figures": figures}


def test_catalog_names_every_drawn_figure():
    assert set(MODEL_FIGURE_TABLES) == set(MODEL_FIGURES)
    assert set(SUMMARY_FIGURE_NAMES) == set(SUMMARY_FIGURES)


@pytest.mark.parametrize("dataset", list(DATASETS))
def test_every_model_figure_is_a_nonempty_image_of_the_expected_size(workdir, dataset):
    root, models = workdir
    out = root / "drawn"
    chosen = [model_entry(root, m, list(MODEL_FIGURES), out) for m in models if m["dataset"] == dataset][:1]
    manifest = out / paths.figure_manifest("jw", dataset)
    meta = root / "results/preprocessed" / dataset / "meta.json"
    written = render_model_figures(models=chosen, meta=meta, options=OPTIONS, manifest=manifest)
    assert len(written) == 2 * len(MODEL_FIGURES) and manifest.exists()
    for name in MODEL_FIGURES:
        stem = out / "results/figures/jw" / dataset / "lstm-tanh" / "seed0" / name
        assert (stem.with_suffix(".pdf")).read_bytes()[:4] == b"%PDF"
        image = Image.open(stem.with_suffix(".png"))
        assert image.width == pytest.approx(OPTIONS.width * OPTIONS.dpi, abs=2), name
        if name != "adversary_examples":
            assert image.height == pytest.approx(OPTIONS.width * OPTIONS.dpi, abs=2), name  # square, as the spec asks
        pixels = np.asarray(image.convert("L"))
        assert pixels.min() < 128 and (pixels < 250).mean() > 0.01, f"{name} looks blank"


def test_summary_figures_render(workdir, tmp_path):
    root, models = workdir
    labelled = [
        {
            **{k: m[k] for k in ("dataset", "encoder", "attention", "seed")},
            "kendall": pd.read_parquet(m["folder"] / "kendall.parquet"),
        }
        for m in models
    ]
    classes = {d: c for d, (_, c) in DATASETS.items()}
    write_csv(tmp_path / "t2.csv", tables.table2(labelled, classes, bootstrap_options={"n_resamples": 100}))
    write_csv(tmp_path / "cm.csv", tables.cross_measure(labelled, bootstrap_options={"n_resamples": 100}))
    figures = {
        "tanh": {
            name: {fmt: tmp_path / p for fmt, p in paths.jw_summary_figure_files("tanh", name).items()}
            for name in SUMMARY_FIGURES
        }
    }
    written = render_summary_figures(
        kendall=tmp_path / "t2.csv", cross_measure=tmp_path / "cm.csv", figures=figures, datasets=list(DATASETS), options=OPTIONS
    )
    assert len(written) == 2 * len(SUMMARY_FIGURES)
    for path in written:
        assert path.startswith(str(tmp_path / "results/figures/jw/summary/tanh/")) and pd.io.common.file_exists(path)
        if path.endswith(".png"):
            image = Image.open(path)
            assert image.width == pytest.approx(OPTIONS.width * OPTIONS.dpi, abs=2) and image.height > 20


def test_unknown_figure_names_fail_with_the_known_names(workdir):
    root, models = workdir
    with pytest.raises(ValueError, match="tau_densities"):
        render_model_figures(models=[model_entry(root, models[0], ["tau_density"], root)], meta="unused", options=OPTIONS)


def test_hue_collapses_to_overall_above_three_classes():
    assert style.hue_labels([0, 1, 1], ["a", "b"]) == ["a", "b", "b"]
    assert style.hue_labels([0, 4], list("abcde")) == ["Overall", "Overall"]
    assert style.hue_palette(["a", "b", "c"]) == dict(zip("abc", style.PALETTES["spec"], strict=True))


def test_examples_prefer_short_instances_with_large_jsd():
    adversary = pd.DataFrame({"instance_id": list("abcd"), "length": [5, 50, 8, 9], "emax_jsd": [0.1, 0.6, 0.3, 0.2]})
    assert list(pick_examples(adversary, 2, 10)["instance_id"]) == ["c", "d"]
    assert len(pick_examples(adversary, 3, 2)) == 3


def test_text_layout_wraps_without_overlap():
    words = ["alpha", "be", "gamma", "delta", "epsilonzeta"]
    places = layout_words(words, 12)
    for (line, column), word, (next_line, next_column) in zip(places, words, places[1:], strict=False):
        assert column + len(word) <= 12
        assert next_line > line or next_column > column + len(word)


def test_figure_style_from_config_and_house_palette(tmp_path):
    config = {"figures": {"palette": "okabe_ito", "width": 2.0, "dpi": 30, "examples": 1, "example_max_tokens": 5}}
    figure_style = FigureLook.from_config(config).style()
    assert figure_style == style.FigureStyle(palette="okabe_ito", width=2.0, dpi=30)
    assert FigureLook.from_config(config).options().examples == 1 and isinstance(
        FigureLook.from_config(config).options(), style.FigureStyle
    )
    with pytest.raises(ValueError, match="spec"):
        style.FigureStyle(palette="rainbow", width=2.0, dpi=30)
    with style.paper_style(figure_style):
        fig, ax = figure_style.figure()
        (line,) = ax.plot([0, 1], [0, 1])
        assert line.get_color() == style.PALETTES["okabe_ito"][0]
        files = {fmt: tmp_path / f"results/figures/wp/x/line.{fmt}" for fmt in ("png", "pdf")}
        figure_style.save(fig, files)
    assert Image.open(files["png"]).width == pytest.approx(60, abs=2) and files["pdf"].read_bytes()[:4] == b"%PDF"


def test_figure_paths():
    assert paths.jw_model_figure_files("d", "lstm", "tanh", 0, "tau_densities")["pdf"] == (
        "results/figures/jw/d/lstm-tanh/seed0/tau_densities.pdf"
    )
    assert (
        paths.jw_summary_figure_files("tanh", "kendall_bars_loo")["png"] == "results/figures/jw/summary/tanh/kendall_bars_loo.png"
    )
    assert paths.figure_manifest("jw", "summary") == "results/figures/jw/summary/figures.json"
