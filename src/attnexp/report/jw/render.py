"""Registry of J&W figures and the functions the workflow calls to draw and save them (PDF + PNG each, at the
paths the workflow gives)."""

import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

from attnexp.io import read_csv, write_json
from attnexp.report.catalog import MODEL_FIGURE_TABLES, SUMMARY_FIGURE_NAMES
from attnexp.report.jw.adversary import adversary_examples, adversary_histogram, adversary_violin
from attnexp.report.jw.data import FigureOptions, load_model_results
from attnexp.report.jw.kendall import tau_densities, tau_differences, tau_histogram
from attnexp.report.jw.permutation import permutation_density, permutation_violin
from attnexp.report.jw.summary import difference_bars, kendall_bars
from attnexp.report.jw.tables import dataset_order
from attnexp.report.style import paper_style, save_figure

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


def _save(fig, files: Mapping[str, str | Path], options: FigureOptions) -> list[str]:
    """Save one figure as PDF and PNG (`files`: format -> path); the written paths, PDF first."""
    written = [str(files["pdf"]), str(files["png"])]
    save_figure(fig, written, dpi=options.dpi)
    return written


def render_model_figures(
    *,
    models: Sequence[Mapping],
    meta: str | Path,
    options: FigureOptions,
    manifest: str | Path | None = None,
) -> list[str]:
    """Draw the figures of each model of one dataset; return the written paths (and list them in `manifest`).

    `models`: one mapping per model with dataset, encoder, attention, seed, the paths of the analysis tables its
    figures read (`importance`, `kendall`, `permutation`, `adversary`; `instances` = the preprocessed instances),
    and `figures`: figure name -> {"png": path, "pdf": path}.
    """
    names = {name for model in models for name in model["figures"]}
    unknown = sorted(names - set(MODEL_FIGURES))
    if unknown:
        raise ValueError(f"unknown figure(s) {unknown}; known: {', '.join(MODEL_FIGURES)}")
    written = []
    with paper_style():
        for model in models:
            start = time.perf_counter()
            needed = {table for name in model["figures"] for table in MODEL_FIGURE_TABLES[name]}
            tables = {f"{table}_path": model[table] for table in sorted(needed)}
            results = load_model_results(model["dataset"], model["encoder"], model["attention"], model["seed"], meta, **tables)
            for name, files in model["figures"].items():
                written += _save(MODEL_FIGURES[name](results, options), files, options)
            print(f"{results.title}: {len(model['figures'])} figure(s) in {time.perf_counter() - start:.1f} s", flush=True)
    if manifest is not None:
        write_json(manifest, {"figures": written, "options": vars(options)})
    return written


def render_summary_figures(
    *,
    kendall: str | Path,
    cross_measure: str | Path,
    figures: Mapping[str, Mapping[str, Mapping[str, str | Path]]],
    datasets: Sequence[str],
    options: FigureOptions,
    manifest: str | Path | None = None,
) -> list[str]:
    """Draw the across-model bar charts from Table 2 and the cross-measure table (their CSVs).

    `figures`: attention type -> figure name -> {"png": path, "pdf": path}; `datasets` in the grid's order.
    """
    names = {name for by_name in figures.values() for name in by_name}
    unknown = sorted(names - set(SUMMARY_FIGURE_NAMES))
    if unknown:
        raise ValueError(f"unknown summary figure(s) {unknown}; known: {', '.join(SUMMARY_FIGURE_NAMES)}")
    kendall_table, cross_table = read_csv(kendall), read_csv(cross_measure)
    written = []
    with paper_style():
        for attention, by_name in figures.items():
            for name, files in by_name.items():
                fig = SUMMARY_FIGURES[name](kendall_table, cross_table, attention, options, dataset_order(datasets))
                written += _save(fig, files, options)
                print(f"summary {attention}/{name}", flush=True)
    if manifest is not None:
        write_json(manifest, {"figures": written, "options": vars(options)})
    return written
