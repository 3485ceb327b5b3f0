from attnexp.datasets.generated.agreement import write_linzen
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_linzen(snakemake.input[0], snakemake.output[0], snakemake.params.seed)
