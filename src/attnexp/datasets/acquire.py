"""Where a dataset's raw files come from, and whether they can be trusted.

Three sources, in this order: user-named files (credentialed/private data), a local raw-data directory in
the layout of ../shared/data or of the extracted official archives, or the official archives downloaded
under resources/ (checksummed, then extracted). A dataset whose files are missing is reported before any
job runs, naming the files and where to put them.
"""

import hashlib
import shutil
import tarfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from attnexp.datasets.babi_format import BABI_TASK_FILES
from attnexp.datasets.registry import DatasetSpec


class DataError(RuntimeError):
    """Raw data is missing, corrupt or truncated; the message says which file and what to do."""


@dataclass(frozen=True)
class Download:
    """One official archive: where it lives, its checksum and what it extracts to (the `official` layout)."""

    url: str
    filename: str
    algorithm: str | None  # "md5" / "sha256" of the archive; None when no checksum of the archive is published
    digest: str | None
    member_sha256: dict[str, str]  # extracted file -> sha256 (the SHA256SUMS of ../shared/data for verbatim copies)
    homepage: str
    outputs: tuple[str, ...]  # what the download rule writes under resources/raw (trailing "/": a directory)


def _babi_member(language: str, task: int, split: str) -> str:
    return f"tasks_1-20_v1-2/{language}/{BABI_TASK_FILES[task]}_{split}.txt"


DOWNLOADS: dict[str, Download] = {
    "sst": Download(
        url="https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip",
        filename="trainDevTestTrees_PTB.zip",
        algorithm=None,
        digest=None,
        member_sha256={
            "trees/train.txt": "e2f3f41b0b1e6d4dddc0effe3bfc2d27ed8928079aa9a03d652311614fc5feb7",
            "trees/dev.txt": "0e9336aed6e4730e19f58d00a77b3f0297efdb755f7b5e598c98a05e3f97ea40",
            "trees/test.txt": "6e54806dee95cf80cd918e7dfb3f6770f6df24bf826f289a4d1f709e1c8f6761",
        },
        homepage="https://nlp.stanford.edu/sentiment/",
        outputs=("trees/train.txt", "trees/dev.txt", "trees/test.txt"),
    ),
    "imdb": Download(
        url="https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
        filename="aclImdb_v1.tar.gz",
        algorithm="md5",
        digest="7c2ac02c03563afcf9b574c7e56c153a",
        member_sha256={"aclImdb/README": "8997da3508dfb0d2274dce886966cf353f32e62c504b9504102e8a8bcf3eb034"},
        homepage="https://ai.stanford.edu/~amaas/data/sentiment/",
        outputs=("aclImdb/README",),
    ),
    "20news": Download(
        url="https://ndownloader.figshare.com/files/5975967",  # scikit-learn's mirror of qwone.com's 20news-bydate.tar.gz
        filename="20news-bydate.tar.gz",
        algorithm="sha256",
        digest="8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610",
        member_sha256={},
        homepage="http://qwone.com/~jason/20Newsgroups/",
        outputs=("20news-bydate-train/", "20news-bydate-test/"),
    ),
    "agnews": Download(  # the CSVs of ag_news_csv.tar.gz as torchtext fetches them (MD5s pinned by torchtext)
        url="https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/{member}",
        filename="ag_news_csv",
        algorithm="md5",
        digest=None,
        member_sha256={},
        homepage="http://groups.di.unipi.it/~gulli/AG_corpus_of_news_articles.html",
        outputs=("ag_news_csv/train.csv", "ag_news_csv/test.csv"),
    ),
    "babi": Download(
        url="https://dl.fbaipublicfiles.com/babi/tasks_1-20_v1-2.tar.gz",
        filename="tasks_1-20_v1-2.tar.gz",
        algorithm=None,
        digest=None,
        member_sha256={
            _babi_member("en-10k", 1, "train"): "749ea9f7c99070feb2d88c975a254417a0dcc8274add4435ae5ae24c7afc7e9d",
            _babi_member("en-10k", 2, "train"): "d4074c0c5d54f70ce2f538056ce2b6ef6a313da336da4245f1a24f1298e37ef3",
            _babi_member("en", 1, "train"): "c64ba9b1a49bbb111ffc4cd2ae4f129d25c012399dd7ade9679eea464b9afb05",
            _babi_member("en", 2, "train"): "a4978af5bc0dc30191810e7c9949aaa6eae939ed0f6beb9fcb5f4330c2a27860",
            _babi_member("en", 3, "train"): "a6e78019f36a02a7ed71fe6aaded0b563ff09c8deec392931801fcd9c6af4d60",
            _babi_member("en", 1, "test"): "55acf66cef2f6d798e2aa1d056e1ec8f24e910ea9215b639450574321132959b",
            _babi_member("en", 2, "test"): "eff93fb9cd81ba02eb765772cf7cc269769ed44ec71cbbbc19cfb16ee5eba0f6",
            _babi_member("en", 3, "test"): "17795c977100baf8188f386522ae301b62d6c1a13efc01b3aea781e588b4d57f",
        },
        homepage="https://research.facebook.com/downloads/babi/",
        outputs=tuple(
            f"tasks_1-20_v1-2/{d}/{stem}_{s}.txt"
            for d in ("en", "en-10k")
            for stem in BABI_TASK_FILES.values()
            for s in ("train", "test")
        ),
    ),
    "snli": Download(
        url="https://nlp.stanford.edu/projects/snli/snli_1.0.zip",
        filename="snli_1.0.zip",
        algorithm="md5",
        digest="981c3df556bbaea3f17f752456d0088c",
        member_sha256={},
        homepage="https://nlp.stanford.edu/projects/snli/",
        outputs=tuple(f"snli_1.0/snli_1.0_{s}.jsonl" for s in ("train", "dev", "test")),
    ),
}
AGNEWS_MD5 = {"train.csv": "b1a00f826fdfbd249f79597b59e1dc12", "test.csv": "d52ea96a97a2d943681189a97654912d"}


def file_digest(path: str | Path, algorithm: str = "sha256") -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, algorithm).hexdigest()


def read_checksums(path: Path) -> dict[str, str]:
    """`sha256sum` output: `<digest>  <relative path>` per line."""
    sums = {}
    for line in path.read_text().splitlines():
        digest, _, name = line.strip().partition("  ")
        if name:
            sums[name.lstrip("*")] = digest
    return sums


def known_checksums() -> dict[str, tuple[str, str]]:
    """(algorithm, digest) of every official-archive member whose checksum is known, by path under the raw dir."""
    known = {member: ("sha256", digest) for d in DOWNLOADS.values() for member, digest in d.member_sha256.items()}
    known |= {f"ag_news_csv/{name}": ("md5", digest) for name, digest in AGNEWS_MD5.items()}
    known |= {f"agnews/{name}": ("md5", digest) for name, digest in AGNEWS_MD5.items()}
    return known


def verify_files(files: dict[str, Path], raw_dir: str | Path | None) -> list[str]:
    """Check each file against `raw_dir/SHA256SUMS` (when present) and the known official checksums.

    Returns the checked paths (relative to `raw_dir`); raises DataError naming the file on any mismatch.
    """
    if raw_dir is None:
        return []
    raw_dir = Path(raw_dir)
    sums_file = raw_dir / "SHA256SUMS"
    expected = known_checksums()
    if sums_file.exists():
        expected |= {name: ("sha256", digest) for name, digest in read_checksums(sums_file).items()}
    checked = []
    for path in dict.fromkeys(files.values()):
        try:
            name = Path(path).resolve().relative_to(raw_dir.resolve()).as_posix()
        except ValueError:
            continue
        if name in expected and Path(path).is_file():
            algorithm, digest = expected[name]
            if file_digest(path, algorithm) != digest:
                raise DataError(
                    f"checksum mismatch for {path}: its {algorithm} is not the published {digest}; the file is corrupt or "
                    "truncated. Restore it from the original source (or ../shared/data) and run again."
                )
            checked.append(name)
    return checked


def layout_files(spec: DatasetSpec, raw_dir: str | Path, layout: str) -> dict[str, Path]:
    return {role: Path(raw_dir) / rel for role, rel in spec.layouts[layout].items()}


def find_layout(spec: DatasetSpec, raw_dir: str | Path) -> str | None:
    """The first layout whose files all exist under `raw_dir`."""
    for layout in spec.layouts:
        if all(p.exists() for p in layout_files(spec, raw_dir, layout).values()):
            return layout
    return None


def user_file_paths(spec: DatasetSpec, user_files: dict) -> dict[str, Path | None]:
    given = (user_files or {}).get(spec.user_group) or {}
    return {role: Path(given[role]) if given.get(role) else None for role in spec.user_files}


def resolve_files(spec: DatasetSpec, raw_dir: str | Path, user_files: dict | None = None) -> dict[str, Path]:
    """Role -> path of the raw files to read; DataError naming what is needed when something is missing."""
    problem = missing_data(spec, raw_dir, user_files)
    if problem:
        raise DataError(problem)
    if spec.files:
        return {role: Path(path) for role, path in spec.files.items()}
    if spec.user_files:
        return user_file_paths(spec, user_files)
    return layout_files(spec, raw_dir, find_layout(spec, raw_dir))


def missing_data(spec: DatasetSpec, raw_dir: str | Path | None, user_files: dict | None = None) -> str | None:
    """None when the dataset can be read; otherwise a message naming the files and where to put them."""
    if spec.files:
        absent = [f"{role}: {path}" for role, path in spec.files.items() if not Path(path).is_file()]
        return (
            f"dataset {spec.name!r} (config user_datasets.{spec.name}): missing file(s) {'; '.join(absent)}" if absent else None
        )
    if spec.user_files:
        paths = user_file_paths(spec, user_files)
        absent = [
            f"data.user_files.{spec.user_group}.{r}" + (f" ({p} does not exist)" if p else " (not set)")
            for r, p in paths.items()
            if p is None or not p.exists()
        ]
        if absent:
            return f"dataset {spec.name!r}: {spec.note or spec.description}. Set in the config: " + "; ".join(absent)
        return None
    if raw_dir is None or find_layout(spec, raw_dir):
        return None
    options = " OR ".join(
        f"{layout} layout: "
        + ", ".join(dict.fromkeys(str(p) for p in layout_files(spec, raw_dir, layout).values() if not p.exists()))
        for layout in spec.layouts
    )
    hint = f" ({spec.note})" if spec.note else ""
    return f"dataset {spec.name!r}{hint}: missing raw file(s) under data.raw_data_dir={raw_dir}; provide the {options}"


def _fetch(url: str, target: Path) -> None:
    tmp = target.with_name(target.name + ".part")
    with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as out:
        shutil.copyfileobj(response, out)
    tmp.replace(target)


def _check(path: Path, algorithm: str | None, digest: str | None, what: str) -> None:
    if algorithm and digest and file_digest(path, algorithm) != digest:
        path.unlink(missing_ok=True)
        raise DataError(
            f"{what}: {algorithm} of {path} is not {digest}; the download is corrupt or partial and was "
            "deleted. Run again, or fetch the file by hand and set data.raw_data_dir."
        )


def download(name: str, archive_dir: str | Path, raw_dir: str | Path) -> list[Path]:
    """Fetch one official archive, verify its checksum, extract it under `raw_dir`, verify the members."""
    spec = DOWNLOADS[name]
    archive_dir, raw_dir = Path(archive_dir), Path(raw_dir)
    archive_dir.mkdir(parents=True, exist_ok=True)
    raw_dir.mkdir(parents=True, exist_ok=True)
    if name == "agnews":
        written = []
        for member, md5 in AGNEWS_MD5.items():
            target = raw_dir / spec.filename / member
            target.parent.mkdir(parents=True, exist_ok=True)
            print(f"downloading {spec.url.format(member=member)}")
            _fetch(spec.url.format(member=member), target)
            _check(target, "md5", md5, f"AG News {member}")
            written.append(target)
        return written
    archive = archive_dir / spec.filename
    if not archive.exists():
        print(f"downloading {spec.url} -> {archive}")
        _fetch(spec.url, archive)
    _check(archive, spec.algorithm, spec.digest, name)
    print(f"extracting {archive} -> {raw_dir}")
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as handle:
                handle.extractall(raw_dir)
        else:
            with tarfile.open(archive) as handle:
                handle.extractall(raw_dir, filter="data")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as err:
        archive.unlink(missing_ok=True)
        raise DataError(f"{archive} cannot be extracted ({err}); it is corrupt or truncated and was deleted. Run again.") from err
    for member, digest in spec.member_sha256.items():
        _check(raw_dir / member, "sha256", digest, f"{name} member {member}")
    return [raw_dir / m for m in spec.member_sha256]
