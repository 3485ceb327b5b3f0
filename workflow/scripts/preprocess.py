from attnexp.pipeline.data import run_preprocess
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_preprocess(
        dataset=snakemake.wildcards.dataset,
        raw_dir=snakemake.params.raw_dir,
        instances_path=snakemake.output.instances,
        meta_path=snakemake.output.meta,
        timings_path=snakemake.output.timings,
        options=dict(snakemake.params.options),
        user_files=dict(snakemake.params.user_files),
        declaration=dict(snakemake.params.declaration) or None,
    )
