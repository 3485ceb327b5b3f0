"""What the config decides for a dataset: where its raw files are, whether the grid can use it, its
hyperparameters and its pretrained word vectors.

`data` is the validated config's `data` section; `basedir` is the folder against which a relative `data.raw_data_dir`
is resolved: the workflow (workflow/rules/common.smk) passes "." (its working directory, the project root) before any
job runs. Paths come back normalised and, when configured relative, relative: a moved project (results/ and
.snakemake/ with it) finds the same inputs and parameters, so Snakemake reruns nothing.
"""

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from attnexp import paths
from attnexp.datasets.acquire import find_layout, missing_data
from attnexp.datasets.registry import DatasetSpec, get_dataset
from attnexp.errors import ConfigError

HYPERPARAMETERS = ("epochs", "batch_size", "embedding_dim", "hidden_size")  # registry defaults, config overrides


def raw_root(data: Mapping, basedir: str | Path) -> str:
    """The configured local raw-data directory, or where the download rules extract (data.raw_data_dir: null)."""
    if data["raw_data_dir"] is None:
        return paths.DOWNLOADED
    path = Path(os.path.expandvars(str(data["raw_data_dir"])))
    return os.path.normpath(path if path.is_absolute() else Path(basedir) / path)


def raw_dir(spec: DatasetSpec, data: Mapping, basedir: str | Path) -> str:
    """The directory preprocessing reads `spec` from: generated data, a converted corpus, or the raw root."""
    if spec.synthetic:
        return paths.SYNTHETIC.format(family=spec.synthetic)
    if "raw_dir" in spec.extra:
        return spec.extra["raw_dir"]
    if spec.files:
        return None  # paths named in config `user_datasets`
    return raw_root(data, basedir)


def raw_files(spec: DatasetSpec, data: Mapping, basedir: str | Path) -> dict[str, str]:
    """Role -> path of the raw files a dataset's preprocessing reads: generated, user-named, the local layout found
    under `data.raw_data_dir`, or what the download rules extract. The workflow resolves them here, once, and
    hands them to the jobs as their inputs."""
    if spec.synthetic or "raw_dir" in spec.extra:
        folder = raw_dir(spec, data, basedir)
        return {role: f"{folder}/{name}" for role, name in next(iter(spec.layouts.values())).items()}
    if spec.files:
        return {role: os.path.normpath(path) for role, path in spec.files.items()}
    if spec.user_files:
        given = data["user_files"][spec.user_group] if spec.user_group in data["user_files"] else {}
        return {role: os.path.normpath(given[role]) for role in spec.user_files if role in given and given[role]}
    root = raw_root(data, basedir)
    layout = find_layout(spec, root) if data["raw_data_dir"] is not None else "official"
    return {role: f"{root}/{rel}" for role, rel in spec.layouts[layout or "official"].items()}


def check_datasets_available(names: Sequence[str], data: Mapping, basedir: str | Path, allow_empty: bool = False) -> list[str]:
    """The datasets of `names` whose raw data is there; the others are dropped (data.on_missing: skip, with a
    message on stderr) or refused (fail: ConfigError naming every missing file). `allow_empty`: a stage that
    may run on no dataset at all (az.datasets) keeps an empty list instead of failing."""
    names = list(names)
    if all(get_dataset(n).synthetic or get_dataset(n).files for n in names):
        return names
    local = raw_root(data, basedir) if data["raw_data_dir"] is not None else None
    if local is not None and not Path(local).is_dir():
        raise ConfigError(
            f"data.raw_data_dir={data['raw_data_dir']!r} is not a directory ({local}); point it at a copy of "
            "../shared/data or at the extracted official archives, or set it to null to download."
        )
    problems = {}
    for name in names:
        spec = get_dataset(name)
        if not spec.synthetic:
            problem = missing_data(spec, None if spec.files else local, data["user_files"])
            if problem:
                problems[name] = problem
    if not problems:
        return names
    listing = "\n  - ".join(problems.values())
    if data["on_missing"] == "skip":
        kept = [n for n in names if n not in problems]
        print(f"Skipping {len(problems)} dataset(s) without raw data:\n  - {listing}", file=sys.stderr)
        if not kept and not allow_empty:
            raise ConfigError("no dataset in the grid has its raw data; see the messages above")
        return kept
    raise ConfigError(
        f"raw data missing for {len(problems)} dataset(s) in the grid:\n  - {listing}\n"
        "Provide the files, remove the datasets from `datasets`, or set data.on_missing: skip."
    )


def hyperparameters(name: str, overrides: Mapping[str, Mapping]) -> dict:
    """Training hyperparameters of a dataset: the registry's defaults, updated by config `hyperparameters.<name>`."""
    spec = get_dataset(name)
    values = {key: getattr(spec, key) for key in HYPERPARAMETERS}
    values.update(overrides.get(name, {}))
    return values


def embeddings(name: str, data: Mapping) -> dict:
    """The paper's pretrained word vectors for a dataset: config key, file (None: random init) and OOV policy
    (MIMIC's word2vec draws N(0, 1) for missing words, the others zeros); {} when the paper used none."""
    spec = get_dataset(name)
    if spec.embeddings is None:
        return {}
    return {
        "source": spec.embeddings,
        "path": data["embeddings"][spec.embeddings] and os.path.normpath(data["embeddings"][spec.embeddings]),
        "missing": "normal" if spec.embeddings == "mimic_w2v" else "zero",
    }
