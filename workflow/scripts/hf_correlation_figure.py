from attnexp.report.az import write_correlation_figure
from attnexp.report.style import FigureStyle
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_correlation_figure(
        summary=snakemake.input.summary,
        dataset=snakemake.params.task,
        gradient=snakemake.params.gradient,
        style=FigureStyle.from_config(snakemake.params.config),
        outputs=dict(snakemake.output.items()),
    )
