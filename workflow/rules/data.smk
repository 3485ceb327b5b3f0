# Raw data (generated offline by default, or local / downloaded corpora) and the one preprocessed format
# every later stage reads.


# One rule per generated family (attnexp.datasets.generated.synthetic.FAMILY_FILES lists what it writes).
for _family in FAMILY_FILES:

    rule:
        name:
            f"synthesize_{_family}"
        output:
            **PLAN.synthetic_files(_family),
        log:
            paths.log("raw/synthetic", _family),
        localrule: True
        conda:
            "../envs/attnexp.yaml"
        threads: 1
        resources:
            **JOB_RESOURCES,
        params:
            settings=settings(job.SynthesizeSettings, family=_family),
        script:
            "../scripts/synthesize.py"


rule preprocess:
    input:
        unpack(get_raw_files),
    output:
        **paths.preprocessed_files(),
    log:
        paths.log("preprocess", "{dataset}"),
    conda:
        "../envs/attnexp.yaml"
    threads: 1
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.PreprocessSettings),
    script:
        "../scripts/preprocess.py"


# Official archives for users with internet (J&W §2): one download rule per archive, checksummed,
# extracted under resources/raw. Used only when data.raw_data_dir is null.
for _archive in DOWNLOADS:

    rule:
        name:
            f"download_{_archive}"
        output:
            get_download_outputs(_archive),
        log:
            paths.log("download", _archive),
        localrule: True  # compute nodes often have no internet; the submit host downloads
        conda:
            "../envs/attnexp.yaml"
        resources:
            **JOB_RESOURCES,
        params:
            settings=settings(job.DownloadSettings, archive=_archive),
        script:
            "../scripts/download.py"


rule preprocessed:
    input:
        PLAN.dataset_targets(),
    localrule: True
