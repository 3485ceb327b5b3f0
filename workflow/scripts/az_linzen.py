from attnexp.datasets.generated.agreement import write_linzen
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_linzen(path_in=snakemake.input[0], path_out=snakemake.output[0], seed=snakemake.params.seed)
