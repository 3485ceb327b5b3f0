from attnexp.datasets.generated.synthetic import generate
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    generate(
        family=snakemake.wildcards.family,
        out_dir=snakemake.output[0],
        seed=snakemake.params.seed,
        options=dict(snakemake.params.options),
    )
