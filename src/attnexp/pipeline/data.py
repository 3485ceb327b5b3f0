"""One preprocessed format for every dataset (J&W §3.2-3.4), written once and read by everything downstream.

`instances.parquet`: instance_id, split, tokens ([SOS] ids [EOS]), label (class index), question
(ids, QA/NLI), rationale (planted cue positions in `tokens`), length (real tokens).
`meta.json`: vocabulary, classes, task, split sizes and the options that produced them.
"""

from pathlib import Path

from attnexp.data.preprocess import preprocess, write_preprocessed
from attnexp.io import write_json
from attnexp.provenance import code_version


def run_preprocess(
    dataset: str,
    raw_dir: str | Path | None,
    instances_path: str | Path,
    meta_path: str | Path,
    options: dict,
    user_files: dict | None = None,
    declaration: dict | None = None,
    timings_path: str | Path | None = None,
) -> dict:
    """Preprocess one dataset from its raw directory (or user-named files) and write the shared format; the
    wall time goes to `timings_path`, so that meta.json is byte-identical between identical runs.

    `declaration`: the validated config `user_datasets.<dataset>` of a dataset declared in the config (a job's
    process has only the built-in registry).
    """
    import time

    from attnexp.datasets import get_dataset
    from attnexp.datasets.user import user_spec

    start = time.perf_counter()
    spec = user_spec(dataset, declaration) if declaration else get_dataset(dataset)
    instances, meta = preprocess(
        spec, raw_dir, options.get("vocab_fit_on", "train"), options.get("implicit_extremes", False), user_files
    )
    meta["code_version"] = code_version()
    write_preprocessed(instances, meta, instances_path, meta_path)
    if timings_path is not None:
        write_json(timings_path, {"seconds": round(time.perf_counter() - start, 2)})
    print(
        f"{dataset}: sizes {meta['sizes']}, |V| = {len(meta['vocab'])}, classes {len(meta['classes'])}, "
        f"mean length {meta['mean_length']:.1f}"
    )
    return meta
