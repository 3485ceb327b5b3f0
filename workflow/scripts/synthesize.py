from attnexp.runlog import log_to
from attnexp.synthetic import generate

with log_to(snakemake.log[0]):
    family = snakemake.rule.removeprefix("synthesize_")
    generate(family, list(snakemake.output), snakemake.params.seed, dict(snakemake.params.options))
