"""Erasure-test jobs (Serrano & Smith 2019; ERASER 2020) across models: the tables and one dataset's figures. The
tests themselves run in each model's analyses job (`attnexp.pipeline.jw.run_analyze`)."""

from attnexp.pipeline import Files
from attnexp.pipeline.settings import FigureSettings, TableSettings


def run_erasure_tables(*, inputs: Files, outputs: Files, settings: TableSettings, threads: int = 1) -> None:
    """The summary per dataset x model x ranking and the single-weight table (`settings.runs`: the models' files)."""
    from attnexp import paths
    from attnexp.report import catalog
    from attnexp.report.erasure import write_erasure_tables

    stems = catalog.outputs(paths.ERASURE, "table")
    by_stem = {stem: {fmt: outputs[f"{stem}_{fmt}"] for fmt in paths.TABLE_FORMATS} for stem in stems}
    write_erasure_tables(models=settings.runs, outputs=by_stem, bootstrap=settings.bootstrap)


def run_erasure_figures(*, inputs: Files, outputs: Files, settings: FigureSettings, threads: int = 1) -> None:
    """One dataset's three erasure figures (a panel per model)."""
    from attnexp.report.erasure import write_erasure_figures

    drawn = settings.drawn
    write_erasure_figures(models=drawn["models"], outputs=drawn["figures"], style=settings.look.style())
