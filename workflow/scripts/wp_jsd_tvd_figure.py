from attnexp.runlog import log_to
from attnexp.wp_figures import jsd_tvd_figure_from

with log_to(snakemake.log[0]):
    jsd_tvd_figure_from(snakemake.input[0], list(snakemake.output), snakemake.wildcards.dataset)
