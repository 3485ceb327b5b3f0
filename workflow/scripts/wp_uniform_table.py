from attnexp.report.wp import write_uniform_table
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_uniform_table(
        base_metrics=list(snakemake.input.base),
        uniform_metrics=list(snakemake.input.uniform),
        reported=snakemake.params.reported,
        outputs=dict(snakemake.output.items()),
    )
