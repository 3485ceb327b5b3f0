from attnexp.datasets.generated.synthetic import generate
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    family = snakemake.rule.removeprefix("synthesize_")
    generate(family, list(snakemake.output), snakemake.params.seed, dict(snakemake.params.options))
