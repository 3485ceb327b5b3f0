from attnexp.datasets.generated.agreement import write_agreement
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_agreement(snakemake.output[0], snakemake.params.seed, dict(snakemake.params.options))
