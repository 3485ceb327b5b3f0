"""Jobs across the three papers: our numbers beside the published values, and the HTML report."""

import subprocess
import sys
import tempfile

from attnexp.pipeline import Files
from attnexp.pipeline.settings import ReportSettings, TableSettings


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


def run_report(*, inputs: Files, outputs: Files, settings: ReportSettings, threads: int = 1) -> None:
    """The HTML report of this run's tables and figures: `snakemake --report` on the same Snakefile, working
    directory and (validated) config, with the tables and figures as its targets."""
    import yaml

    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as configfile:
        yaml.safe_dump(settings.config, configfile)
        configfile.flush()
        command = [sys.executable, "-m", "snakemake", "-s", settings.snakefile, "--nolock"]
        command += ["--configfile", configfile.name, "--report", outputs["report"]]
        command += [path for group in inputs.values() for path in ([group] if isinstance(group, str) else group)]
        print(" ".join(command), flush=True)
        subprocess.run(command, stdout=sys.stdout, stderr=subprocess.STDOUT, check=True)
