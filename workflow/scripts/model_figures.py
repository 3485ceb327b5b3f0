from attnexp.report.jw.data import FigureOptions
from attnexp.report.jw.render import render_model_figures
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    render_model_figures(
        snakemake.params.models,
        snakemake.params.names,
        snakemake.input.meta,
        snakemake.params.output_dir,
        FigureOptions(**snakemake.params.options),
        snakemake.output.get("manifest"),
    )
