"""Downloads and raw-data checks a hostile network or a tampered copy must not get past (issue 15)."""

import shutil
import subprocess
import sys
import urllib.request
import zipfile

import pytest

from attnexp.datasets import acquire
from attnexp.datasets.acquire import DataError, Download, download
from attnexp.pipeline.data import run_preprocess
from tests.factories import preprocess_job

SST_MEMBERS = ("trees/train.txt", "trees/dev.txt", "trees/test.txt")


def _sst_like(tmp_path, shared_data, tamper: bool) -> Download:
    """A local copy of the SST archive (the shared trees are the official ones) with a planted extra file."""
    served = tmp_path / "served.zip"
    with zipfile.ZipFile(served, "w") as handle:
        for member in SST_MEMBERS:
            text = (shared_data / "sst" / member.split("/")[1]).read_text()
            handle.writestr(member, text + ("(2 planted)\n" if tamper and member.endswith("dev.txt") else ""))
        handle.writestr("trees/planted.sh", "echo planted\n")
    sst = acquire.DOWNLOADS["sst"]
    return Download(served.as_uri(), "sst.zip", None, None, sst.member_sha256, "", sst.outputs)


def test_an_archive_without_a_published_digest_is_checked_before_anything_lands(tmp_path, shared_data, monkeypatch):
    monkeypatch.setitem(acquire.DOWNLOADS, "fake", _sst_like(tmp_path, shared_data, tamper=True))
    with pytest.raises(DataError, match=r"trees/dev\.txt.*deleted with its archive"):
        download("fake", tmp_path / "archives", tmp_path / "raw")
    assert not (tmp_path / "archives/sst.zip").exists()
    assert list((tmp_path / "raw").iterdir()) == []  # nothing extracted into place, no staging left


def test_a_verified_archive_lands_without_unexpected_members(tmp_path, shared_data, monkeypatch):
    monkeypatch.setitem(acquire.DOWNLOADS, "fake", _sst_like(tmp_path, shared_data, tamper=False))
    download("fake", tmp_path / "archives", tmp_path / "raw")
    assert sorted(p.relative_to(tmp_path / "raw").as_posix() for p in (tmp_path / "raw").rglob("*")) == sorted(
        ["trees", *SST_MEMBERS]
    )


def test_redirects_to_unexpected_hosts_and_plain_http_are_refused():
    handler = acquire._AllowedRedirects(("stanford.edu",))
    request = urllib.request.Request("https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip")
    assert handler.redirect_request(request, None, 302, "Found", {}, "https://downloads.cs.stanford.edu/x.zip")
    for target in ("https://evil.example.com/x.zip", "https://stanford.edu.evil.com/x.zip", "http://nlp.stanford.edu/x"):
        with pytest.raises(DataError, match="not an expected host"):
            handler.redirect_request(request, None, 302, "Found", {}, target)


def test_offline_download_is_one_clear_message(tmp_path, monkeypatch):
    """No network (here: a closed local port): the URL and the local alternative, no traceback."""
    fake = Download("https://127.0.0.1:9/a.zip", "a.zip", "sha256", "0" * 64, {}, "", ("x",), hosts=("127.0.0.1",))
    monkeypatch.setitem(acquire.DOWNLOADS, "fake", fake)
    with pytest.raises(DataError) as err:
        download("fake", tmp_path / "archives", tmp_path / "raw")
    assert "https://127.0.0.1:9/a.zip" in str(err.value) and "data.raw_data_dir" in str(err.value)
    assert not list((tmp_path / "archives").iterdir())
    script = (
        "import sys; from attnexp.runlog import log_to; from attnexp.errors import DataError\n"
        f"with log_to({str(tmp_path / 'job.log')!r}): raise DataError('cannot download https://x (offline)')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("ERROR: cannot download https://x (offline)")


def test_the_shared_layout_is_verified_without_a_sums_file(tmp_path, shared_data):
    for name in ("train", "dev", "test"):
        (tmp_path / "sst").mkdir(exist_ok=True)
        shutil.copy(shared_data / f"sst/{name}.txt", tmp_path / f"sst/{name}.txt")
    with open(tmp_path / "sst/dev.txt", "a") as handle:
        handle.write("(3 (3 planted))\n")
    inputs, settings = preprocess_job("sst", tmp_path)
    outputs = {"instances": tmp_path / "i.parquet", "meta": tmp_path / "m.json", "timings": tmp_path / "t.json"}
    with pytest.raises(DataError, match=r"checksum mismatch for .*sst/dev\.txt"):
        run_preprocess(inputs=inputs, outputs=outputs, settings=settings)
    assert not (tmp_path / "i.parquet").exists()
