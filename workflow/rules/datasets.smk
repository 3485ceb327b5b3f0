# Official archives for users with internet (J&W §2): one download rule per archive, checksummed,
# extracted under resources/raw. Used only when data.raw_data_dir is null.
for _archive in DOWNLOADS:

    rule:
        name:
            f"download_{_archive}"
        output:
            download_outputs(_archive),
        log:
            f"logs/download/{_archive}.log",
        localrule: True  # compute nodes often have no internet; the submit host downloads
        conda:
            "../envs/attnexp.yaml"
        resources:
            runtime=60,
        params:
            archive=_archive,
            url=lambda wildcards, url=DOWNLOADS[_archive].url: url,
        script:
            "../scripts/download.py"


rule preprocessed:
    input:
        get_datasets_targets(),
    localrule: True
