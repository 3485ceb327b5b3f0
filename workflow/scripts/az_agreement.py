from attnexp.datasets.generated.agreement import write_agreement
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_agreement(path=snakemake.output[0], seed=snakemake.params.seed, options=dict(snakemake.params.options))
