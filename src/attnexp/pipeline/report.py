"""Jobs across the three papers: our numbers beside the published values, and the HTML report."""

import subprocess
import sys
import tempfile

from attnexp.pipeline import Files
from attnexp.pipeline.settings import ComparisonPageSettings, ReportSettings, TableSettings


def run_table(*, inputs: Files, outputs: Files, settings: TableSettings, threads: int = 1) -> None:
    """A one-table job of any paper: the catalog's builder for `settings.table` (attnexp.report.catalog)."""
    from attnexp.report import catalog

    catalog.builder(settings.table)(inputs=inputs, outputs=outputs, settings=settings)


def run_paper_comparison(*, inputs: Files, outputs: Files, settings: TableSettings, threads: int = 1) -> None:
    """The comparison table: every published number this grid can match, ours beside it (`settings.runs`)."""
    from attnexp.report.comparison import build_paper_comparison

    runs = settings.runs
    build_paper_comparison(
        metas=runs["metas"],
        jw_models=runs["jw_models"],
        wp_runs=runs["wp_runs"],
        az_runs=runs["az_runs"],
        outputs=outputs,
        nan_policy=settings.nan_policy,
        bootstrap_options=settings.bootstrap,
    )


def analysed_sample(analyses: dict) -> tuple[int, int] | None:
    """`analyses.test_sample` as (n, seed), None for the whole test set."""
    sample = analyses["test_sample"]
    return None if sample["n"] is None else (sample["n"], sample["seed"])


def run_paper_comparison_page(*, inputs: Files, outputs: Files, settings: ComparisonPageSettings, threads: int = 1) -> None:
    """The comparison as a results page (`paper-comparison.md` and its HTML): the table, why each row's settings
    differ, the compared datasets, and what made it (command, config, code)."""
    from attnexp.provenance import code_version
    from attnexp.report.comparison_page import Provenance, build_comparison_page

    provenance = Provenance(
        configfiles=settings.configfiles,
        config_args=settings.config_args,
        replace_workflow_config=settings.replace_workflow_config,
        snakefile=settings.snakefile,
        datasets=settings.datasets,
        stage_datasets=settings.stage_datasets,
        config_changes=settings.config_changes,
        code=code_version(),
    )
    build_comparison_page(
        table=inputs["table"],
        metas=inputs["metas"],
        configs=inputs["configs"],
        outputs=outputs,
        provenance=provenance,
        test_sample=analysed_sample(settings.analyses),
    )


REPORT_STYLESHEET = "report.css"  # in attnexp.report: what the report adds to Snakemake's styles


def report_stylesheet():
    """attnexp's stylesheet for Snakemake's HTML report (`--report-stylesheet`): a results row shows its file when
    clicked anywhere on it, not only on its eye button."""
    from importlib.resources import files

    return files("attnexp.report") / REPORT_STYLESHEET


def run_report(*, inputs: Files, outputs: Files, settings: ReportSettings, threads: int = 1) -> None:
    """The HTML report of this run's tables and figures: `snakemake --report` on the same Snakefile, working
    directory and (validated) config, with the tables and figures as its targets, and attnexp's stylesheet
    (`report_stylesheet`)."""
    from importlib.resources import as_file

    import yaml

    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as configfile, as_file(report_stylesheet()) as stylesheet:
        yaml.safe_dump(settings.config, configfile)
        configfile.flush()
        command = [sys.executable, "-m", "snakemake", "-s", settings.snakefile, "--nolock"]
        command += ["--configfile", configfile.name, "--report", outputs["report"]]
        command += ["--report-stylesheet", str(stylesheet)]
        command += [path for group in inputs.values() for path in ([group] if isinstance(group, str) else group)]
        print(" ".join(command), flush=True)
        subprocess.run(command, stdout=sys.stdout, stderr=subprocess.STDOUT, check=True)
