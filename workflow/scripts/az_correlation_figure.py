from attnexp.report.az import write_correlation_figure
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_correlation_figure(
        summary=snakemake.input.summary,
        dataset=snakemake.wildcards.dataset,
        gradient=snakemake.params.gradient,
        palette=snakemake.params.palette,
        width=snakemake.params.width,
        dpi=snakemake.params.dpi,
        outputs=dict(snakemake.output.items()),
    )
