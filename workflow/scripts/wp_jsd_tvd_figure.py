from attnexp.report.wp import jsd_tvd_figure_from
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    jsd_tvd_figure_from(snakemake.input[0], list(snakemake.output), snakemake.wildcards.dataset)
