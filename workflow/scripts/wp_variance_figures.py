from attnexp.runlog import log_to
from attnexp.wp_figures import variance_figures

with log_to(snakemake.log[0]):
    variance_figures(
        snakemake.input[0],
        dict(snakemake.output.items()),
        snakemake.params.compared,
        snakemake.wildcards.dataset,
    )
