from attnexp.report.az import write_cls_maps
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_cls_maps(
        relevance=snakemake.input.relevance,
        meta=snakemake.input.meta,
        width=snakemake.params.width,
        dpi=snakemake.params.dpi,
        outputs=dict(snakemake.output.items()),
    )
