from attnexp.models.settings import HFSettings
from attnexp.pipeline.hf import run_hf_tokenize
from attnexp.runlog import log_to

with log_to(snakemake.log[0]):
    run_hf_tokenize(
        dataset=snakemake.wildcards.dataset,
        settings=HFSettings.from_config(snakemake.params.config, snakemake.wildcards.hf_model),
        preprocessed={"instances": snakemake.input.instances, "meta": snakemake.input.meta},
        raw_dir=snakemake.params.raw_dir,
        user_files=dict(snakemake.params.user_files),
        declaration=dict(snakemake.params.declaration) or None,
        outputs=dict(snakemake.output.items()),
    )
