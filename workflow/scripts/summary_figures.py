from attnexp.report.jw.data import FigureOptions
from attnexp.report.jw.render import render_summary_figures
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    render_summary_figures(
        snakemake.input.kendall,
        snakemake.input.cross,
        snakemake.params.names,
        snakemake.params.attentions,
        snakemake.params.output_dir,
        FigureOptions(**snakemake.params.options),
        snakemake.params.datasets,
        snakemake.output.get("manifest"),
    )
