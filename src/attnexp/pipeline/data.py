"""Data jobs: generate the offline families, download the official archives, and preprocess every dataset into
the one format all later stages read (`instances.parquet` + `meta.json`; J&W §3.2-3.4)."""

import time

from attnexp import paths
from attnexp.pipeline import Files
from attnexp.pipeline.settings import DownloadSettings, PreprocessSettings, SynthesizeSettings


def run_synthesize(*, inputs: Files, outputs: Files, settings: SynthesizeSettings, threads: int = 1) -> None:
    """One generated family: its raw files (sentiment, nli, babi: `outputs` by file name, in the family's folder),
    the agreement CSV, or the Linzen corpus (`inputs["corpus"]`) converted to it."""
    from attnexp.datasets.generated.agreement import write_agreement, write_linzen
    from attnexp.datasets.generated.synthetic import generate

    if settings.family == "agreement":
        write_agreement(path=outputs["data"], seed=settings.seed, options=settings.options)
    elif settings.family == "linzen":
        write_linzen(path_in=inputs["corpus"], path_out=outputs["data"], seed=settings.seed)
    else:
        folder = paths.SYNTHETIC.format(family=settings.family)
        generate(family=settings.family, out_dir=folder, seed=settings.seed, options=settings.options)


def run_download(*, inputs: Files, outputs: Files, settings: DownloadSettings, threads: int = 1) -> None:
    """One official archive, checksummed and extracted under resources/raw."""
    from attnexp.datasets.acquire import download

    download(name=settings.archive, archive_dir=paths.ARCHIVES, raw_dir=paths.DOWNLOADED)


def run_preprocess(*, inputs: Files, outputs: Files, settings: PreprocessSettings, threads: int = 1) -> dict:
    """Preprocess one dataset from its raw files (`inputs`: role -> path, as the plan resolved them) and write the
    shared format; the wall time goes to `outputs["timings"]`, so that meta.json is byte-identical between identical
    runs."""
    from attnexp.data.preprocess import dropped_summary, preprocess_files, write_preprocessed
    from attnexp.datasets import get_dataset
    from attnexp.datasets.user import user_spec
    from attnexp.io import write_json
    from attnexp.provenance import code_version

    start = time.perf_counter()
    name, declaration = settings.dataset, settings.declaration
    spec = user_spec(name, declaration) if declaration else get_dataset(name)
    instances, meta = preprocess_files(spec, inputs, settings.vocab_fit_on, settings.implicit_extremes, settings.raw_dir)
    meta["code_version"] = code_version()
    write_preprocessed(instances, meta, outputs["instances"], outputs["meta"])
    write_json(outputs["timings"], {"seconds": round(time.perf_counter() - start, 2)})
    print(
        f"{name}: sizes {meta['sizes']}, |V| = {len(meta['vocab'])}, classes {len(meta['classes'])}, "
        f"mean length {meta['mean_length']:.1f}"
    )
    for line in dropped_summary(meta):
        print(line)
    return meta
