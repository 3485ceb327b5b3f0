from attnexp.report.jw.tables import build_rationale_table
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    build_rationale_table(
        recovery=snakemake.input.recovery,
        outputs=dict(snakemake.output.items()),
        bootstrap_options=snakemake.params.bootstrap,
    )
