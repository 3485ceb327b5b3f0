from attnexp.report.style import FigureStyle
from attnexp.report.wp import draw_variance_figures
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    draw_variance_figures(
        variance=snakemake.input[0],
        violin=[snakemake.output.violin_png, snakemake.output.violin_pdf],
        scatter=[snakemake.output.scatter_png, snakemake.output.scatter_pdf],
        compared=snakemake.params.compared,
        title=snakemake.wildcards.dataset,
        style=FigureStyle.from_config(snakemake.params.config),
    )
