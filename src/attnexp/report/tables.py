"""The one table writer of every paper: CSV (long, full precision, for machines) plus Markdown and LaTeX (for
papers) and HTML (for the report), numbers rounded, to `attnexp.paths.table_files(paper, stem)`; and the
across-seed summaries the tables share (`mean_with_bootstrap_ci`: mean per group with a percentile-bootstrap
interval over seeds).
"""

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

from attnexp.io import write_csv, write_text
from attnexp.report.order import ALIASES, PAPER_ORDER, dataset_order  # noqa: F401 (re-exported)

DIGITS = 3  # decimals of every number in the Markdown and LaTeX versions
MISSING = "–"  # NaN in the Markdown and LaTeX versions
LATEX_SYMBOLS = {"±": r"$\pm$", "τ": r"$\tau$", "−": "$-$", "≤": r"$\leq$", "–": "--", "Δ": r"$\Delta$", "ρ": r"$\rho$"}


def seed_interval(
    values: Sequence[float], confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0
) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean over seeds; NaN with fewer than two finite values."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return float("nan"), float("nan")
    if np.ptp(values) == 0:
        return float(values[0]), float(values[0])
    from scipy.stats import bootstrap  # here: scipy.stats adds ~0.7 s to every table job's start

    result = bootstrap(
        (values,),
        np.mean,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def mean_with_bootstrap_ci(
    per_seed: pd.DataFrame,
    keys: Sequence[str],
    means: Sequence[str],
    sums: Sequence[str] = (),
    ci_of: str = "mean",
    bootstrap_options: Mapping | None = None,
    skipna: bool = True,
) -> pd.DataFrame:
    """Collapse the `seed` column: mean of `means`, sum of `sums`, n_seeds, and a bootstrap CI of `ci_of`.

    `bootstrap_options`: config `figures.bootstrap` (confidence, n_resamples, seed). `skipna=False` keeps a NaN
    seed visible in the mean (the `propagate` τ policy).
    """
    grouped = per_seed.groupby(list(keys), sort=False, dropna=False)
    table = grouped[list(means)].mean() if skipna else grouped[list(means)].agg(lambda v: v.mean(skipna=False))
    for column in sums:
        table[column] = grouped[column].sum()
    table.insert(0, "n_seeds", grouped["seed"].nunique())
    intervals = grouped[ci_of].agg(lambda v: seed_interval(v, **(bootstrap_options or {})))
    table["ci_low"] = [low for low, _ in intervals]
    table["ci_high"] = [high for _, high in intervals]
    return table.reset_index()


def rounded(display: pd.DataFrame, digits: int = DIGITS) -> pd.DataFrame:
    """`display` with every float cell as text with `digits` decimals (NaN as "–"); other cells unchanged."""
    display = display.copy()
    for column in display.columns:
        values = display[column]
        if pd.api.types.is_float_dtype(values) or values.map(lambda v: isinstance(v, float)).any():
            display[column] = [(MISSING if np.isnan(v) else f"{v:.{digits}f}") if isinstance(v, float) else v for v in values]
    return display


def _is_number(value) -> bool:
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return value == MISSING
        return True
    return isinstance(value, int | float | np.number) and not isinstance(value, bool)


def column_alignment(display: pd.DataFrame) -> list[str]:
    """Markdown alignment per column: right for numbers (also numbers written as text), left otherwise."""
    return ["right" if len(display) and display[c].map(_is_number).all() else "left" for c in display.columns]


def markdown_text(value) -> str:
    """`value` as the text of one Markdown table cell: `|` and backslashes escaped (a `|V|` header would end its
    cell), `<` and `>` as entities (Markdown passes raw HTML through), line breaks as spaces."""
    text = str(value).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def markdown_cells(display: pd.DataFrame) -> pd.DataFrame:
    """`display` with every header and cell escaped by `markdown_text` (labels come from the data)."""
    escaped = display.map(markdown_text)
    escaped.columns = [markdown_text(c) for c in display.columns]
    return escaped


def markdown_table(display: pd.DataFrame) -> str:
    """`display` (already rounded) as a Markdown table: cells escaped, numbers right-aligned."""
    return markdown_cells(display).to_markdown(index=False, disable_numparse=True, colalign=column_alignment(display))


def latex_symbols(text: str) -> str:
    """Unicode symbols of the display text as LaTeX commands (±, τ, −, ≤, –, Δ, ρ)."""
    for symbol, command in LATEX_SYMBOLS.items():
        text = text.replace(symbol, command)
    return text


HTML_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.2em;color:#1a1a1a;background:#fff}"
    "p.caption{max-width:60em;margin:0 0 .8em}"
    "table{border-collapse:collapse;font-size:14px}"
    "th,td{padding:.25em .75em;border-bottom:1px solid #ddd;white-space:nowrap}"
    "th{border-bottom:2px solid #444}"
    "td{font-variant-numeric:tabular-nums}"
    "tbody tr:nth-child(even){background:rgb(0 0 0/.04)}"  # see-through: the scroll shadows show behind the rows
    "thead th{position:sticky;top:0;z-index:1;background:#fff;border-bottom:0;box-shadow:inset 0 -2px 0 #444}"
)
# A table's own page (html_table): the caption, then the table in a box that fills the rest of the window (of the
# report's pane, an iframe as high as the window) and scrolls both ways, its header row staying in view, so that a
# table wider than the pane is never cut off and its horizontal scroll bar is on screen, not below the last row.
# The scroll bars are drawn always (styled: Chromium and Safari otherwise overlay them, hidden until one scrolls),
# and an edge with more columns behind it is shaded (a background that scrolls with the content covers the shade
# at each end).
TABLE_PAGE_STYLE = (
    "body.table{display:flex;flex-direction:column;box-sizing:border-box;height:100vh;margin:0;padding:1.2em}"
    "div.scroll{flex:1 1 auto;min-height:12em;overflow:auto;background:"
    "linear-gradient(to right,#fff 30%,#fff0) left/2em 100% no-repeat local,"
    "linear-gradient(to left,#fff 30%,#fff0) right/2em 100% no-repeat local,"
    "radial-gradient(farthest-side at 0 50%,#0003,#0000) left/.9em 100% no-repeat scroll,"
    "radial-gradient(farthest-side at 100% 50%,#0003,#0000) right/.9em 100% no-repeat scroll #fff}"
    "div.scroll::-webkit-scrollbar{width:10px;height:10px}"
    "div.scroll::-webkit-scrollbar-thumb{background:#aaa;border-radius:5px}"
    "div.scroll::-webkit-scrollbar-track,div.scroll::-webkit-scrollbar-corner{background:#eee}"
    "@supports not selector(::-webkit-scrollbar){div.scroll{scrollbar-color:#aaa #eee}}"
)


def html_table(display: pd.DataFrame, caption: str = "") -> str:
    """`display` (already rounded) as a standalone HTML page under `caption`: the report shows HTML inline,
    whereas it only offers a CSV for download."""
    align = column_alignment(display)
    head = "".join(f'<th style="text-align:{a}">{escape(str(c))}</th>' for c, a in zip(display.columns, align, strict=True))
    rows = "".join(
        "<tr>" + "".join(f'<td style="text-align:{a}">{escape(str(v))}</td>' for v, a in zip(row, align, strict=True)) + "</tr>"
        for row in display.itertuples(index=False)
    )
    table = f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
    body = table if len(display) else "<p>(no rows)</p>"
    title = escape(caption.split(":")[0][:80]) if caption else "table"
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<style>{HTML_STYLE}{TABLE_PAGE_STYLE}</style></head>\n<body class="table">\n'
        + (f'<p class="caption">{escape(caption)}</p>\n' if caption else "")
        + f"{body}\n</body></html>\n"
    )


def write_table(
    table: pd.DataFrame,
    outputs: Mapping[str, str | Path],
    *,
    caption: str = "",
    display: pd.DataFrame | None = None,
    digits: int = DIGITS,
) -> None:
    """Write one table: `table` as CSV (every column, full precision); `display` (default: `table`), the paper
    layout, as Markdown and LaTeX under `caption`, floats rounded to `digits` decimals.

    `outputs`: {"csv", "md", "tex", "html"} -> path, e.g. `paths.table_files("wp", "uniform_table")`; the HTML
    page (the report's entry) is written when `outputs` names one.
    """
    display = rounded(table if display is None else display, digits)
    write_csv(outputs["csv"], table)
    print(f"{outputs['csv']}: {len(table)} rows (+ {Path(outputs['md']).name}, {Path(outputs['tex']).name})", flush=True)
    markdown = markdown_table(display) if len(display) else "(no rows)"
    write_text(outputs["md"], f"{markdown_text(caption)}\n\n{markdown}\n" if caption else f"{markdown}\n")
    latex = display.to_latex(index=False, caption=caption or None, escape=True, longtable=len(display) > 40, na_rep=MISSING)
    write_text(outputs["tex"], latex_symbols(latex))
    if "html" in outputs:
        write_text(outputs["html"], html_table(display, caption))
