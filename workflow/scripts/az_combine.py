from attnexp.pipeline.az import combine_runs
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    combine_runs(runs=snakemake.params.runs, outputs=dict(snakemake.output.items()))
