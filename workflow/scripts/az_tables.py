from attnexp.az import paper_tables
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    paper_tables(list(snakemake.input.summaries), list(snakemake.input.recoveries), snakemake.params.gradient, dict(snakemake.output.items()))
