"""Raw-data acquisition: corrupt or truncated files fail clearly and leave no downstream outputs."""

import shutil
import zipfile
from pathlib import Path

import pytest

from attnexp.datasets import acquire, get_dataset
from attnexp.datasets.acquire import DataError, Download, download, missing_data
from attnexp.pipeline.data import run_preprocess
from tests.factories import preprocess_job
from tests.workflow.helpers import snakemake, tiny_config

REPO = Path(__file__).resolve().parents[2]
SST_FILES = ("sst/train.txt", "sst/dev.txt", "sst/test.txt")


@pytest.fixture
def sst_copy(tmp_path, shared_data) -> Path:
    """A raw-data directory with SST and the SHA256SUMS lines that cover it."""
    shared = shared_data
    raw = tmp_path / "raw"
    for name in SST_FILES:
        (raw / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shared / name, raw / name)
    sums = [line for line in (shared / "SHA256SUMS").read_text().splitlines() if line.endswith(SST_FILES)]
    (raw / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    return raw


def planned_preprocess(raw_dir: Path, out: Path):
    """The preprocess job of SST with its raw data under `raw_dir`, planned now (its files under `out`: instances,
    meta, timings); call it to run it."""
    inputs, settings = preprocess_job("sst", raw_dir)
    outputs = {"instances": out / "instances.parquet", "meta": out / "meta.json", "timings": out / "timings.json"}
    return lambda: run_preprocess(inputs=inputs, outputs=outputs, settings=settings)


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_truncated_file_fails_before_any_output(sst_copy, tmp_path):
    _truncate(sst_copy / "sst/dev.txt")
    out = tmp_path / "out"
    job = planned_preprocess(sst_copy, out)
    with pytest.raises(DataError, match=r"checksum mismatch for .*sst/dev\.txt.*corrupt or truncated"):
        job()
    assert not out.exists() or not any(out.iterdir())


def test_wrong_checksum_in_sums_file_fails(sst_copy, tmp_path):
    sums = (sst_copy / "SHA256SUMS").read_text().replace("sst/test.txt", "sst/x").replace("sst/train.txt", "sst/test.txt")
    (sst_copy / "SHA256SUMS").write_text(sums)
    job = planned_preprocess(sst_copy, tmp_path)
    with pytest.raises(DataError, match="sst/test.txt"):
        job()
    assert not (tmp_path / "instances.parquet").exists() and not (tmp_path / "meta.json").exists()


def test_official_layout_member_checksum_is_checked(tmp_path):
    """Without a SHA256SUMS file, the known checksums of the official archive's members still apply."""
    for split in ("train", "dev", "test"):
        (tmp_path / "trees").mkdir(exist_ok=True)
        (tmp_path / "trees" / f"{split}.txt").write_text("(3 (2 not) (3 the official file))\n")
    job = planned_preprocess(tmp_path, tmp_path)
    with pytest.raises(DataError, match=r"trees/train\.txt"):
        job()


def test_corrupt_download_is_deleted_and_not_extracted(tmp_path, monkeypatch):
    junk = tmp_path / "served.zip"
    with zipfile.ZipFile(junk, "w") as handle:
        handle.writestr("trees/train.txt", "(3 (3 good))\n")
    fake = Download(
        url=junk.as_uri(),
        filename="archive.zip",
        algorithm="sha256",
        digest="0" * 64,
        member_sha256={},
        homepage="",
        outputs=("trees/train.txt",),
    )
    monkeypatch.setitem(acquire.DOWNLOADS, "fake", fake)
    with pytest.raises(DataError, match="corrupt or partial"):
        download("fake", tmp_path / "archives", tmp_path / "raw")
    assert not (tmp_path / "archives" / "archive.zip").exists()
    assert not (tmp_path / "raw" / "trees").exists()


def test_truncated_download_archive_fails_clearly(tmp_path, monkeypatch):
    served = tmp_path / "served.tar.gz"
    served.write_bytes(b"\x1f\x8b\x08\x00 not really a tarball")
    fake = Download(served.as_uri(), "a.tar.gz", None, None, {}, "", ("x",))
    monkeypatch.setitem(acquire.DOWNLOADS, "fake", fake)
    with pytest.raises(DataError, match="cannot be extracted"):
        download("fake", tmp_path / "archives", tmp_path / "raw")
    assert not (tmp_path / "archives" / "a.tar.gz").exists()


def test_missing_data_message_names_files(tmp_path):
    message = missing_data(get_dataset("agnews"), tmp_path)
    assert "agnews/train.csv" in message and "ag_news_csv/train.csv" in message
    assert missing_data(get_dataset("sst"), None) is None  # downloads cover it


@pytest.mark.slow
def test_workflow_stops_before_any_job_when_data_is_missing(tmp_path):
    config = tiny_config(datasets=["sst", "cnn"])
    config["data"].update(raw_data_dir=str(tmp_path / "nowhere"), on_missing="fail")
    (tmp_path / "nowhere").mkdir()
    result = snakemake(tmp_path, "-n", config=config)
    assert result.returncode != 0
    assert "data.user_files.cnn.train" in result.stderr + result.stdout
    assert "sst/train.txt" in result.stderr + result.stdout


@pytest.mark.slow
def test_workflow_corrupt_file_leaves_no_preprocessed_output(sst_copy, tmp_path):
    _truncate(sst_copy / "sst/train.txt")
    work = tmp_path / "work"
    work.mkdir()
    config = tiny_config(datasets=["sst"])
    config["data"]["raw_data_dir"] = str(sst_copy)
    result = snakemake(work, "preprocessed", config=config)
    assert result.returncode != 0
    assert "checksum mismatch" in (work / "logs/preprocess/sst.log").read_text()
    assert not (work / "results/preprocessed/sst/instances.parquet").exists()
    assert not (work / "results/preprocessed/sst/meta.json").exists()


@pytest.mark.slow
def test_without_raw_data_dir_the_official_archives_are_downloaded(tmp_path):
    config = tiny_config(datasets=["sst", "20news", "babi3"])
    result = snakemake(tmp_path, "-n", "--quiet", "rules", config=config)
    assert result.returncode == 0, result.stderr[-2000:]
    for rule in ("download_sst", "download_20news", "download_babi"):
        assert rule in result.stdout
