"""Registry of figures and the functions the workflow calls to draw and save them (PNG + PDF each)."""

import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

import pandas as pd

from attnexp.io import write_json
from attnexp.report.jw.adversary import adversary_examples, adversary_histogram, adversary_violin
from attnexp.report.jw.catalog import MODEL_FIGURE_TABLES, SUMMARY_FIGURE_NAMES
from attnexp.report.jw.data import FigureOptions, load_model_results
from attnexp.report.jw.kendall import tau_densities, tau_differences, tau_histogram
from attnexp.report.jw.permutation import permutation_density, permutation_violin
from attnexp.report.jw.summary import difference_bars, kendall_bars
from attnexp.report.style import paper_style, save_figure
from attnexp.report.tables import dataset_order

FORMATS = ("pdf", "png")


MODEL_FIGURES: dict[str, Callable] = {
    "tau_hist_attn_grad": partial(tau_histogram, pair="attn_grad"),
    "tau_hist_attn_loo": partial(tau_histogram, pair="attn_loo"),
    "tau_densities": tau_densities,
    "tau_differences": tau_differences,
    "permutation_violin": permutation_violin,
    "permutation_density": permutation_density,
    "adversary_hist": adversary_histogram,
    "adversary_violin": adversary_violin,
    "adversary_examples": adversary_examples,
}

SUMMARY_FIGURES: dict[str, Callable] = {
    "kendall_bars_gradient": partial(kendall_bars, pair="attn_grad"),
    "kendall_bars_loo": partial(kendall_bars, pair="attn_loo"),
    "kendall_differences": difference_bars,
}


def figure_paths(stem: str | Path) -> list[str]:
    return [f"{stem}.{suffix}" for suffix in FORMATS]


def render_model_figures(
    models: Sequence[Mapping],
    names: Sequence[str],
    meta_path: str | Path,
    output_dir: str | Path,
    options: FigureOptions,
    manifest_path: str | Path | None = None,
) -> list[str]:
    """Draw figures `names` for each model and save them under `output_dir/{encoder}-{attention}/seed{seed}/`.

    `models`: one mapping per model with encoder, attention, seed and the paths of its analysis tables
    (`importance`, `kendall`, `permutation`, `adversary`; `instances` = the preprocessed instances).
    """
    unknown = sorted(set(names) - set(MODEL_FIGURES))
    if unknown:
        raise ValueError(f"unknown figure(s) {unknown}; known: {', '.join(MODEL_FIGURES)}")
    needed = {table for name in names for table in MODEL_FIGURE_TABLES[name]}
    written = []
    with paper_style():
        for model in models:
            start = time.perf_counter()
            paths = {f"{table}_path": model[table] for table in needed}
            results = load_model_results(
                model["dataset"], model["encoder"], model["attention"], model["seed"], meta_path, **paths
            )
            folder = Path(output_dir) / f"{model['encoder']}-{model['attention']}" / f"seed{model['seed']}"
            for name in names:
                outputs = figure_paths(folder / name)
                save_figure(MODEL_FIGURES[name](results, options), outputs, dpi=options.dpi)
                written += outputs
            print(f"{results.title}: {len(names)} figure(s) in {time.perf_counter() - start:.1f} s", flush=True)
    if manifest_path is not None:
        write_json(manifest_path, {"figures": written, "options": vars(options)})
    return written


def render_summary_figures(
    kendall_table: str | Path,
    cross_measure_table: str | Path,
    names: Sequence[str],
    attentions: Sequence[str],
    output_dir: str | Path,
    options: FigureOptions,
    datasets: Sequence[str],
    manifest_path: str | Path | None = None,
) -> list[str]:
    """Draw the across-model bar charts for each attention type under `output_dir/{attention}/`."""
    unknown = sorted(set(names) - set(SUMMARY_FIGURE_NAMES))
    if unknown:
        raise ValueError(f"unknown summary figure(s) {unknown}; known: {', '.join(SUMMARY_FIGURE_NAMES)}")
    kendall = pd.read_csv(kendall_table)
    cross = pd.read_csv(cross_measure_table)
    written = []
    with paper_style():
        for attention in attentions:
            for name in names:
                outputs = figure_paths(Path(output_dir) / attention / name)
                fig = SUMMARY_FIGURES[name](kendall, cross, attention, options, dataset_order(datasets))
                save_figure(fig, outputs, dpi=options.dpi)
                written += outputs
                print(f"summary {attention}/{name}", flush=True)
    if manifest_path is not None:
        write_json(manifest_path, {"figures": written, "options": vars(options)})
    return written
