from attnexp.report.wp import variance_figures
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    variance_figures(
        snakemake.input[0],
        dict(snakemake.output.items()),
        snakemake.params.compared,
        snakemake.wildcards.dataset,
    )
