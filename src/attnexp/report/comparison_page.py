"""The comparison as a results page: `paper-comparison.md` (and its HTML for the report), written by the workflow.

The page holds the `paper_comparison` table, one table per paper (ours beside the published value); the reasons our
settings differ, numbered once and named by number on each row; the compared datasets with fallbacks flagged; and
how it was made: the command (the run's config files and `--config` values), the datasets the grid ran, the config
as it differs from the schema's defaults, and the code that produced the runs and the page. Everything on it comes
from its inputs and arguments, none from the clock: the same inputs give the same bytes.
"""

import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from attnexp import paths
from attnexp.datasets import DATASETS
from attnexp.io import read_csv, read_json, read_yaml, write_text
from attnexp.report.comparison import COLUMNS, PAPER_NAMES, REASON_SEPARATOR, comparison_display
from attnexp.report.published import PUBLISHED_VALUES
from attnexp.report.tables import DIGITS, HTML_STYLE, TABLE_PAGE_STYLE, markdown_table, markdown_text, rounded

TITLE = "Our numbers beside the papers'"
NUMBERS = ["n_seeds", "ours", "ci_low", "ci_high", "published", "difference"]
INTRO = (
    "Ours is the mean over seeds with its 95% percentile-bootstrap interval over seeds (none with one seed) and the "
    "number of seeds; Δ = ours − published. The published values (paper, table and page: "
    f"`src/attnexp/report/{PUBLISHED_VALUES}`) are here to be read, not matched: nothing in this project is tuned "
    "towards them and no test asserts them. *Vectors* names the word vectors the runs started from: random N(0, 1) "
    "rows, the paper's file (as its checksum says) or a substitute that is not the paper's. *Differs* numbers the ways "
    "our settings differ from the paper's; the reasons are listed below the tables."
)


STAGE_LABELS = {"wp": "W&P", "az": "A&Z"}  # the stages whose datasets the page lists after the J&W grid's
WORKFLOW_CONFIG = "config/config.yaml"  # the workflow's own config file (workflow/Snakefile), under every --configfile


@dataclass(frozen=True)
class Provenance:
    """What made the page: the command's config files (`--configfile`, over the workflow's own unless
    `replace_workflow_config`) and `--config` values, the Snakefile (relative; "Snakefile" when the project root's),
    the datasets the grid ran (`datasets`; W&P's and A&Z's in `stage_datasets`, by paper key), the config as it
    differs from the schema's defaults, and the code that rendered the page (`attnexp.provenance.code_version`)."""

    configfiles: tuple = ()
    config_args: tuple = ()
    replace_workflow_config: bool = False
    snakefile: str = "Snakefile"
    datasets: tuple = ()
    stage_datasets: Mapping | None = None
    config_changes: Mapping | None = None
    code: Mapping | None = None


def command(target: str, provenance: Provenance) -> str:
    """The snakemake command that builds `target` with the run's Snakefile, config files and `--config` values;
    the target comes before `--configfile`, which takes several files."""
    words = ["snakemake", "--cores", "all"]
    if provenance.snakefile not in ("Snakefile", "./Snakefile"):
        words += ["-s", provenance.snakefile]
    words.append(target)
    if provenance.replace_workflow_config:
        words.append("--replace-workflow-config")
    if provenance.configfiles:
        words += ["--configfile", *provenance.configfiles]
    if provenance.config_args:
        words += ["--config", *provenance.config_args]
    return shlex.join(words)


def read_comparison(path: str | Path) -> pd.DataFrame:
    """The comparison CSV as written: text columns as str ("" where empty), the numbers as numbers (NaN where empty)."""
    table = read_csv(path, dtype=str, keep_default_na=False)
    table = table.assign(**{c: pd.to_numeric(table[c], errors="coerce") for c in NUMBERS})
    return table.reindex(columns=COLUMNS, fill_value="")  # a table written before a column existed: it stays empty


def row_reasons(table: pd.DataFrame) -> list[list[str]]:
    """Each row's reasons: the comparison's (`reason`, split at REASON_SEPARATOR; a test sample is one of them)."""
    return [[r for r in reason.split(REASON_SEPARATOR) if r] for reason in table["reason"]]


def numbered(reasons: Sequence[Sequence[str]]) -> dict[str, int]:
    """Every distinct reason -> its number, in order of first appearance."""
    order = dict.fromkeys(r for row in reasons for r in row)
    return {reason: i for i, reason in enumerate(order, start=1)}


def paper_tables(table: pd.DataFrame, reasons: Sequence[Sequence[str]], numbers: Mapping[str, int]) -> str:
    """One Markdown table per paper: the comparison's display columns, the reasons as their numbers."""
    display = rounded(comparison_display(table, DIGITS), DIGITS)
    display["Differs"] = [", ".join(str(n) for n in sorted(numbers[r] for r in row)) or "–" for row in reasons]
    display = display.drop(columns=["Settings differ"])
    sections = []
    for paper, name in PAPER_NAMES.items():
        rows = (table["paper"] == paper).to_numpy()
        if rows.any():
            sections.append(f"## {name}\n\n{markdown_table(display[rows].drop(columns=['Paper']))}")
    return "\n\n".join(sections)


def datasets_line(provenance: Provenance) -> str:
    """The datasets the grid ran: the J&W grid's, then W&P's and A&Z's where they run any ("none" without any)."""
    parts = [", ".join(provenance.datasets)] if provenance.datasets else []
    stages = provenance.stage_datasets or {}
    parts += [f"{label}: {', '.join(stages[p])}" for p, label in STAGE_LABELS.items() if stages.get(p)]
    return "; ".join(parts) or "none"


def dataset_table(table: pd.DataFrame, metas: Mapping[str, Mapping], test_sample: tuple | None = None) -> str:
    """The compared datasets: which published dataset each stands for, whether it is comparable (`comparable` in
    its meta.json; a fallback variant is not), its test instances (and the analyses' sample), and its note."""
    rows = []
    for dataset, paper_dataset in dict(zip(table["dataset"], table["paper_dataset"], strict=True)).items():
        meta = metas.get(dataset) or {}
        size = meta.get("sizes", {}).get("test")
        tested = "–" if size is None else str(size)
        if test_sample and size is not None and test_sample[0] < size:
            tested += f" (J&W analyses: {test_sample[0]})"
        generated = DATASETS[dataset].synthetic is not None if dataset in DATASETS else False
        flag = "**no**" if dataset == paper_dataset else "**no** (generated)" if generated else "**no** (fallback)"
        rows.append(
            {
                "Dataset": dataset,
                "Stands for": paper_dataset,
                "Comparable": "yes" if meta.get("comparable", True) else flag,
                "Test instances": tested,
                "Note": meta.get("note") or "–",
            }
        )
    return markdown_table(pd.DataFrame(rows))


def code_line(versions: Sequence[Mapping]) -> str:
    """Distinct code versions with their counts: "commit `<sha>` (3)", "... with uncommitted changes", or the
    package version outside a git checkout."""
    counts = Counter((v.get("package"), v.get("commit"), v.get("dirty")) for v in versions if v)
    parts = []
    for (package, commit, dirty), count in sorted(counts.items(), key=lambda item: (-item[1], str(item[0]))):
        text = f"commit `{commit}`" if commit else f"attnexp {package} (not a git checkout)"
        text += " with uncommitted changes" if dirty else ""
        parts.append(f"{text} ({count} file{'s' if count != 1 else ''})" if len(versions) > 1 else text)
    return ", ".join(parts) or "not recorded"


def render(
    table: pd.DataFrame,
    *,
    metas: Mapping[str, Mapping],
    run_versions: Sequence[Mapping] = (),
    provenance: Provenance = Provenance(),
    test_sample: tuple | None = None,
    target: str = paths.paper_comparison_page_files()["md"],
    published: str = paths.COMPARISON_DOC,
) -> str:
    """The page's Markdown. `table`: the comparison (`read_comparison`); `metas`: dataset -> meta.json of the
    compared datasets; `run_versions`: the code versions recorded by the compared runs and datasets;
    `test_sample`: (n, seed) of `analyses.test_sample`, None for the whole test set; `target` and `published`: the
    page's path in results/ and its committed copy (the regenerate lines)."""
    reasons = row_reasons(table)
    numbers = numbered(reasons)
    this = command(target, provenance)
    written = "Written by the workflow (rule `paper_comparison_page`) from the `paper_comparison` table; do not edit."
    lines = [f"# {TITLE}", "", f"{written} {INTRO}", ""]
    if table.empty:
        lines += ["No dataset of this grid is one the papers report on (e.g. generated data only): no rows.", ""]
    else:
        lines += [paper_tables(table, reasons, numbers), ""]
        lines += ["## Why the settings differ", ""]
        lines += [f"{n}. {markdown_text(reason)}" for reason, n in numbers.items()] or ["None: every row ran as in the paper."]
        lines += ["", "## Datasets", "", dataset_table(table, metas, test_sample), ""]
    files = [] if provenance.replace_workflow_config else [f"`{WORKFLOW_CONFIG}` (the workflow's)"]
    files += [f"`{f}`" for f in provenance.configfiles]
    values = ", ".join(f"`{a}`" for a in provenance.config_args)
    config = ", then ".join(files + ([f"the `--config` values {values}"] if values else []))
    lines += [
        "## How this page was made",
        "",
        f"- Command: `{this}`; options that do not change results (e.g. `--cores`) are not recorded.",
        f"- Config: {config}, each over the ones before; every other key at its schema default.",
        f"- Datasets the grid ran: {datasets_line(provenance)}.",
        f"- Code of the compared runs and datasets: {code_line(run_versions)}.",
        f"- Code of this page: {code_line([provenance.code] if provenance.code else [])}.",
        "- The config, as far as it differs from the schema's defaults:",
        "",
        "```yaml",
        yaml.safe_dump(
            dict(provenance.config_changes or {}), sort_keys=False, allow_unicode=True, default_flow_style=None
        ).rstrip(),
        "```",
        "",
        "## Regenerate and publish",
        "",
        "From the project root, with the same config files:",
        "",
        "```sh",
        this,
        f"cp {shlex.quote(target)} {shlex.quote(published)}",
        "```",
        "",
    ]
    return "\n".join(lines)


# each of the page's tables in a box of at most 40% of the window that scrolls both ways, its header row in view and
# its horizontal scroll bar on screen (as a table's own page, `tables.html_table`), so a wide table is never cut off
PAGE_TABLES = "div.scroll{max-height:40vh;margin-bottom:1em}"


def html_page(markdown: str) -> str:
    """The page as standalone HTML for the report (markdown-it-py, CommonMark with tables, raw HTML escaped)."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    body = body.replace("<table>", '<div class="scroll"><table>').replace("</table>", "</table></div>")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{TITLE}</title>'
        f"<style>{HTML_STYLE}{TABLE_PAGE_STYLE}{PAGE_TABLES}</style></head>\n<body>\n{body}</body></html>\n"
    )


def build_comparison_page(
    *,
    table: str | Path,
    metas: Sequence[str | Path],
    configs: Sequence[str | Path],
    outputs: Mapping[str, str | Path],
    provenance: Provenance,
    test_sample: tuple | None = None,
) -> str:
    """paper-comparison.{md,html} from the comparison CSV, the compared datasets' meta.json and the compared runs'
    config.yaml (for the code versions they recorded). Returns the Markdown."""
    compared = read_comparison(table)
    loaded = [read_json(path) for path in metas]
    runs = [read_yaml(path) or {} for path in configs]  # checked against their sha256 sidecars
    versions = [r["code_version"] for r in [*loaded, *runs] if r.get("code_version")]
    metas_by_name = {m["dataset"]: m for m in loaded}
    markdown = render(compared, metas=metas_by_name, run_versions=versions, provenance=provenance, test_sample=test_sample)
    write_text(outputs["md"], markdown)
    if "html" in outputs:
        write_text(outputs["html"], html_page(markdown))
    reasons = numbered(row_reasons(compared))
    print(f"{outputs['md']}: {len(compared)} rows, {len(reasons)} reasons", flush=True)
    return markdown
