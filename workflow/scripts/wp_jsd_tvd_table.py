from attnexp.report.wp import write_points_table
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_points_table(
        points=snakemake.input[0],
        dataset=snakemake.wildcards.dataset,
        outputs=dict(snakemake.output.items()),
    )
