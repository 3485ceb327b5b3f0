from attnexp.az import plot_correlation_curves
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    plot_correlation_curves(snakemake.input[0], snakemake.params.gradient, snakemake.output[0])
