from attnexp.report.az import write_cls_maps
from attnexp.report.style import FigureStyle
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    write_cls_maps(
        relevance=snakemake.input.relevance,
        meta=snakemake.input.meta,
        style=FigureStyle.from_config(snakemake.params.config),
        outputs=dict(snakemake.output.items()),
    )
