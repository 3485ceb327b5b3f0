from attnexp.report.jw.data import FigureOptions
from attnexp.report.jw.render import render_summary_figures
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    render_summary_figures(
        kendall=snakemake.input.kendall,
        cross_measure=snakemake.input.cross,
        figures=snakemake.params.figures,
        datasets=snakemake.params.datasets,
        options=FigureOptions.from_config(snakemake.params.config),
        manifest=snakemake.output.get("manifest"),
    )
