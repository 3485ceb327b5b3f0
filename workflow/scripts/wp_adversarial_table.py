from attnexp.report.wp import write_adversarial_table
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_adversarial_table(
        adversary_metrics=list(snakemake.input.adversaries),
        base_metrics=list(snakemake.input.base),
        outputs=dict(snakemake.output.items()),
    )
