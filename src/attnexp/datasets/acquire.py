"""Where a dataset's raw files come from, and whether they can be trusted.

Three sources, in this order: user-named files (credentialed/private data), a local raw-data directory in
the layout of ../shared/data or of the extracted official archives, or the official archives downloaded
under resources/ (checksummed, then extracted). A dataset whose files are missing is reported before any
job runs, naming the files and where to put them.
"""

import hashlib
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from attnexp.datasets.babi_format import BABI_TASK_FILES
from attnexp.datasets.registry import DatasetSpec
from attnexp.errors import DataError

__all__ = ["DOWNLOADS", "DataError", "Download", "download", "find_layout", "missing_data", "resolve_files"]


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
    hosts: tuple[str, ...] = ()  # hosts (and their subdomains) a redirect may lead to; () = the URL's own host
    member_sha1: dict[str, str] = field(default_factory=dict)  # extracted file -> sha1, where only a SHA-1 is known
    plain: bool = False  # the URL is the file itself (outputs[0]), not an archive to extract
    # outputs whose sha256 no one publishes: written at the first download beside them as `<output>.sha256`
    # (`sha256sum` format), unverified, so that a later copy can be compared with it
    record_sha256: tuple[str, ...] = ()

    @property
    def files(self) -> tuple[str, ...]:
        """Everything the download rule writes under resources/raw: the outputs and the recorded sha256 files."""
        return self.outputs + tuple(f"{out}.sha256" for out in self.record_sha256)

    def member_checksums(self) -> dict[str, tuple[str, str]]:
        """Extracted file (or, `plain`, the file itself) -> (algorithm, digest) of every one whose checksum is known."""
        return {m: ("sha256", d) for m, d in self.member_sha256.items()} | {m: ("sha1", d) for m, d in self.member_sha1.items()}


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
        hosts=("stanford.edu",),
    ),
    "imdb": Download(
        url="https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
        filename="aclImdb_v1.tar.gz",
        algorithm="md5",
        digest="7c2ac02c03563afcf9b574c7e56c153a",
        member_sha256={"aclImdb/README": "8997da3508dfb0d2274dce886966cf353f32e62c504b9504102e8a8bcf3eb034"},
        homepage="https://ai.stanford.edu/~amaas/data/sentiment/",
        outputs=("aclImdb/README",),
        hosts=("stanford.edu",),
    ),
    "20news": Download(
        url="https://ndownloader.figshare.com/files/5975967",  # scikit-learn's mirror of qwone.com's 20news-bydate.tar.gz
        filename="20news-bydate.tar.gz",
        algorithm="sha256",
        digest="8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610",
        member_sha256={},
        homepage="http://qwone.com/~jason/20Newsgroups/",
        outputs=("20news-bydate-train/", "20news-bydate-test/"),
        hosts=("figshare.com", "amazonaws.com"),  # figshare serves its files from S3; the sha256 is pinned
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
            # en-10k's test files are byte-identical to en's (../shared/data/SHA256SUMS)
            _babi_member("en-10k", 1, "test"): "55acf66cef2f6d798e2aa1d056e1ec8f24e910ea9215b639450574321132959b",
            _babi_member("en-10k", 2, "test"): "eff93fb9cd81ba02eb765772cf7cc269769ed44ec71cbbbc19cfb16ee5eba0f6",
            _babi_member("en-10k", 3, "test"): "17795c977100baf8188f386522ae301b62d6c1a13efc01b3aea781e588b4d57f",
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
    # The papers' word vectors (J&W §2; data.embeddings.<key>: official). Neither Facebook nor Stanford publishes a
    # checksum: the SHA-1s are those Apache MXNet pinned when it downloaded the official files
    # (python/mxnet/contrib/text/_constants.py; DGL's TreeLSTM example pins the same GloVe ones). No sha256 could be
    # verified: each file's sha256 is unverified, recorded at first download (`<file>.sha256`).
    "fasttext_simple": Download(
        url="https://dl.fbaipublicfiles.com/fasttext/vectors-wiki/wiki.simple.vec",
        filename="wiki.simple.vec",
        algorithm="sha1",
        digest="55267c50fbdf4e4ae0fbbda5c73830a379d68795",
        member_sha256={},
        homepage="https://fasttext.cc/docs/en/pretrained-vectors.html",
        outputs=("wiki.simple.vec",),
        plain=True,
        record_sha256=("wiki.simple.vec",),
    ),
    "glove_840b": Download(
        url="https://nlp.stanford.edu/data/glove.840B.300d.zip",  # redirects to downloads.cs.stanford.edu
        filename="glove.840B.300d.zip",
        algorithm="sha1",
        digest="8084fbacc2dee3b1fd1ca4cc534cbfff3519ed0d",
        member_sha256={},
        homepage="https://nlp.stanford.edu/projects/glove/",
        outputs=("glove.840B.300d.txt",),
        hosts=("stanford.edu",),
        member_sha1={"glove.840B.300d.txt": "294b9f37fa64cce31f9ebb409c266fc379527708"},
        record_sha256=("glove.840B.300d.txt",),
    ),
}
AGNEWS_MD5 = {"train.csv": "b1a00f826fdfbd249f79597b59e1dc12", "test.csv": "d52ea96a97a2d943681189a97654912d"}
# sha256 of the files of the `shared` layout (../shared/data/SHA256SUMS): a copy is verified even without
# that SHA256SUMS file beside it, the same way as the official layout's members
SHARED_SHA256 = {
    "20newsgroups/20news-bydate.jsonl.xz": "fbc05fb42558581e7836044913d0b0ebbaf6b5019d2a1c2da208c3d8e9032964",
    "agnews/test.csv": "521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699",
    "babi/en-10k/qa1_single-supporting-fact_test.txt": "55acf66cef2f6d798e2aa1d056e1ec8f24e910ea9215b639450574321132959b",
    "babi/en-10k/qa1_single-supporting-fact_train.txt": "749ea9f7c99070feb2d88c975a254417a0dcc8274add4435ae5ae24c7afc7e9d",
    "babi/en-10k/qa2_two-supporting-facts_test.txt": "eff93fb9cd81ba02eb765772cf7cc269769ed44ec71cbbbc19cfb16ee5eba0f6",
    "babi/en-10k/qa2_two-supporting-facts_train.txt": "d4074c0c5d54f70ce2f538056ce2b6ef6a313da336da4245f1a24f1298e37ef3",
    "babi/en-10k/qa3_three-supporting-facts_test.txt": "17795c977100baf8188f386522ae301b62d6c1a13efc01b3aea781e588b4d57f",
    "babi/en/qa1_single-supporting-fact_test.txt": "55acf66cef2f6d798e2aa1d056e1ec8f24e910ea9215b639450574321132959b",
    "babi/en/qa1_single-supporting-fact_train.txt": "c64ba9b1a49bbb111ffc4cd2ae4f129d25c012399dd7ade9679eea464b9afb05",
    "babi/en/qa2_two-supporting-facts_test.txt": "eff93fb9cd81ba02eb765772cf7cc269769ed44ec71cbbbc19cfb16ee5eba0f6",
    "babi/en/qa2_two-supporting-facts_train.txt": "a4978af5bc0dc30191810e7c9949aaa6eae939ed0f6beb9fcb5f4330c2a27860",
    "babi/en/qa3_three-supporting-facts_test.txt": "17795c977100baf8188f386522ae301b62d6c1a13efc01b3aea781e588b4d57f",
    "babi/en/qa3_three-supporting-facts_train.txt": "a6e78019f36a02a7ed71fe6aaded0b563ff09c8deec392931801fcd9c6af4d60",
    "imdb/README_aclImdb.txt": "8997da3508dfb0d2274dce886966cf353f32e62c504b9504102e8a8bcf3eb034",
    "imdb/aclImdb_train_test.jsonl.gz": "42487b8d603152fcda7ad279f5b60244c992481df92735285924bddbd647ef42",
    "snli/snli_1.0_dev.tsv": "dc3cdacf1cef526dccd5ca58fb195b66f249c9b15dff0d46ff0d4d138e1e1e4d",
    "snli/snli_1.0_test.tsv": "c56822451475e7dccf12cd2e68676fa1ccb0ac8c8d9b751c01915003712bb202",
    "sst/dev.txt": "0e9336aed6e4730e19f58d00a77b3f0297efdb755f7b5e598c98a05e3f97ea40",
    "sst/jw_sst_dataset.csv": "f1cb07e552c8522c7a35895465156dfb3206395fbc64e705808f31d67f86df23",
    "sst/test.txt": "6e54806dee95cf80cd918e7dfb3f6770f6df24bf826f289a4d1f709e1c8f6761",
    "sst/train.txt": "e2f3f41b0b1e6d4dddc0effe3bfc2d27ed8928079aa9a03d652311614fc5feb7",
}


def file_digest(path: str | Path, algorithm: str = "sha256") -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, algorithm).hexdigest()


def file_digests(path: str | Path, algorithms: tuple[str, ...] = ("sha1", "sha256")) -> dict[str, str]:
    """Several digests of one file in a single read (a 5.6 GB GloVe file is read once, not once per algorithm)."""
    hashes = {name: hashlib.new(name) for name in algorithms}
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            for h in hashes.values():
                h.update(chunk)
    return {name: h.hexdigest() for name, h in hashes.items()}


def record_sha256(path: Path) -> str:
    """Write `<path>.sha256` (`sha256sum` format) beside a downloaded file whose sha256 no one publishes; return it."""
    digest = file_digest(path)
    target = path.with_name(path.name + ".sha256")
    tmp = target.with_name(target.name + ".part")
    tmp.write_text(f"{digest}  {path.name}\n")
    tmp.replace(target)
    print(f"sha256 of {path} (unverified, recorded at first download): {digest}")
    return digest


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
    known |= {name: ("sha256", digest) for name, digest in SHARED_SHA256.items()}
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
            f"data.user_files.{spec.user_group}.{r}"
            + (" (not set)" if p is None else f" ({p} is a directory, not a file)" if p.is_dir() else f" ({p} does not exist)")
            for r, p in paths.items()
            if p is None or not p.is_file()
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


LOCAL_ALTERNATIVE = (
    "Without internet access, copy the raw files in the layout of ../shared/data (or of the extracted official "
    "archive) into a folder and set data.raw_data_dir to it"
)


def _host_allowed(url: str, hosts: tuple[str, ...]) -> bool:
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme == "file":
        return True  # a local mirror
    host = (parsed.hostname or "").lower()
    return parsed.scheme == "https" and any(host == h or host.endswith("." + h) for h in hosts)


class _AllowedRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to an expected host, over HTTPS."""

    def __init__(self, hosts: tuple[str, ...]):
        self.hosts = hosts

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if not _host_allowed(newurl, self.hosts):
            raise DataError(
                f"{req.full_url} redirects to {newurl}, which is not an expected host ({', '.join(self.hosts)}, "
                f"HTTPS only); nothing was downloaded. {LOCAL_ALTERNATIVE}."
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _expected_hosts(url: str, hosts: tuple[str, ...]) -> tuple[str, ...]:
    return hosts or ((urllib.parse.urlsplit(url).hostname or "").lower(),)


def _fetch(url: str, target: Path, hosts: tuple[str, ...] = ()) -> None:
    """Download `url` to `target` (via `target.part`); redirects only to `hosts`; no network: one DataError."""
    hosts = _expected_hosts(url, hosts)
    if not _host_allowed(url, hosts):
        raise DataError(f"refusing to download {url}: only HTTPS from {', '.join(hosts)} is expected")
    tmp = target.with_name(target.name + ".part")
    opener = urllib.request.build_opener(_AllowedRedirects(hosts))
    try:
        with opener.open(url, timeout=60) as response, open(tmp, "wb") as out:
            shutil.copyfileobj(response, out)
    except (TimeoutError, urllib.error.URLError, ConnectionError) as err:
        tmp.unlink(missing_ok=True)
        reason = getattr(err, "reason", err)
        raise DataError(f"cannot download {url} ({reason}). {LOCAL_ALTERNATIVE}.") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(target)


def _check(path: Path, algorithm: str | None, digest: str | None, what: str, delete: tuple[Path, ...] = ()) -> None:
    """DataError when `path` has not the expected digest; `path` (and `delete`) are removed first."""
    if algorithm and digest and file_digest(path, algorithm) != digest:
        for bad in (path, *delete):
            bad.unlink(missing_ok=True)
        raise DataError(
            f"{what}: {algorithm} of {path} is not {digest}; the download is corrupt or partial (or tampered with) and "
            f"was deleted{' with its archive' if delete else ''}. Run again, or fetch the file by hand and set "
            "data.raw_data_dir."
        )


def _extract(archive: Path, target: Path) -> None:
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as handle:
                handle.extractall(target)  # zipfile drops absolute paths and ".." components
        else:
            with tarfile.open(archive) as handle:
                handle.extractall(target, filter="data")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as err:
        archive.unlink(missing_ok=True)
        raise DataError(f"{archive} cannot be extracted ({err}); it is corrupt or truncated and was deleted. Run again.") from err


def download(name: str, archive_dir: str | Path, raw_dir: str | Path) -> list[Path]:
    """Fetch one official archive and verify its checksum; extract it into a temporary folder, verify every
    member whose checksum is known, and only then move the expected outputs (nothing else the archive may hold)
    into `raw_dir`. Whatever fails verification is deleted. A `plain` download (a word-vector file) is verified and
    moved into `raw_dir` as it is; the outputs of `record_sha256` get their `.sha256` file beside them. The download
    lands in `archive_dir` (via a `.part` file, renamed when complete), and a complete, verified one is reused by a
    rerun that failed later."""
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
            _fetch(spec.url.format(member=member), target, spec.hosts)
            _check(target, "md5", md5, f"AG News {member}")
            written.append(target)
        return written
    archive = archive_dir / spec.filename
    if not archive.exists():
        print(f"downloading {spec.url} -> {archive}")
        _fetch(spec.url, archive, spec.hosts)
    _check(archive, spec.algorithm, spec.digest, name)
    if spec.plain:  # a file, not an archive: verified above, moved into place (the same file system: resources/)
        target = raw_dir / spec.outputs[0]
        target.parent.mkdir(parents=True, exist_ok=True)
        archive.replace(target)
        for out in spec.record_sha256:
            record_sha256(raw_dir / out)
        print(f"verified and moved {target.name} into {raw_dir}")
        return [target]
    staging = Path(tempfile.mkdtemp(dir=raw_dir, prefix=f".{name}.", suffix=".extracting"))
    try:
        print(f"extracting {archive} -> {staging}")
        _extract(archive, staging)
        for member, (algorithm, digest) in spec.member_checksums().items():
            if not (staging / member).is_file():
                archive.unlink(missing_ok=True)
                raise DataError(f"{archive} lacks {member}; it is not the expected archive and was deleted. Run again.")
            _check(staging / member, algorithm, digest, f"{name} member {member}", delete=(archive,))
        for out in spec.outputs:
            source, target = staging / out.rstrip("/"), raw_dir / out.rstrip("/")
            if not source.exists():
                archive.unlink(missing_ok=True)
                raise DataError(f"{archive} lacks {out}; it is not the expected archive and was deleted. Run again.")
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir():
                shutil.rmtree(target)
            source.replace(target)
        for out in spec.record_sha256:
            record_sha256(raw_dir / out)
        print(f"verified and moved {len(spec.outputs)} output(s) into {raw_dir}")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [raw_dir / m for m in spec.member_checksums()]
