from attnexp.report.style import FigureStyle
from attnexp.report.wp import draw_jsd_tvd_figure
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    draw_jsd_tvd_figure(
        points=snakemake.input[0],
        paths=[snakemake.output.jsd_tvd_png, snakemake.output.jsd_tvd_pdf],
        title=snakemake.wildcards.dataset,
        style=FigureStyle.from_config(snakemake.params.config),
    )
