from attnexp.report.jw.data import FigureOptions
from attnexp.report.jw.render import render_model_figures
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    render_model_figures(
        models=snakemake.params.models,
        meta=snakemake.input.meta,
        options=FigureOptions.from_config(snakemake.params.config),
        manifest=snakemake.output.get("manifest"),
    )
