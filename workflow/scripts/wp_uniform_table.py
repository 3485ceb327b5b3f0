from attnexp.analyses.wp.runs import uniform_table
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    uniform_table(
        list(snakemake.input.base),
        list(snakemake.input.uniform),
        snakemake.output[0],
        snakemake.params.reported,
    )
