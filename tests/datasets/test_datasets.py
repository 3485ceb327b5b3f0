"""The real-data parsers against ../shared/data (J&W §3.5 sizes) and the user-file readers on fixtures."""

from pathlib import Path

import pandas as pd
import pytest
import torch

from attnexp.data.batching import collate
from attnexp.data.preprocess import preprocess
from attnexp.datasets import get_dataset
from attnexp.datasets.tokenize import clean, clean_newsgroups, clean_sst, keras_tokens


def _sizes(meta: dict) -> tuple:
    return tuple(meta["sizes"][s] for s in ("train", "dev", "test"))


def _counts(meta: dict, split: str) -> list[int]:
    return [meta["class_counts"][split][c] for c in sorted(meta["class_counts"][split])]


# --- tokenizers ---


def test_clean_lowercases_and_masks_digits():
    assert clean("The  Year 1999 was GOOD") == "the year qqq was good"
    assert "qqq" in clean("covid-19").split()


def test_mimic_cleaner_maps_deid_and_collapses_repeats():
    text = clean("Seen by [**Doctor Name 123**] on ===== day", mimic=True).split()
    assert "<DE>" in text and "=" in text and "=====" not in text and "123" not in text


def _authors_cleaner_mimic(text: str) -> str:
    """`cleaner_mimic` of successar/AttentionExplanation preprocess/vectorizer.py, verbatim but for the
    tokenizer (spaCy's rule-based English tokenizer, as the spec says)."""
    import re

    from attnexp.datasets.tokenize import tokenizer

    text = re.sub(r"\s+", " ", text.strip())
    text = [t.text.lower() for t in tokenizer()(text)]
    text = " ".join(text)
    text = re.sub(r"\[\s*\*\s*\*(.*?)\*\s*\*\s*\]", " <DE> ", text)
    text = re.sub(r"([^a-zA-Z0-9])(\s*\1\s*)+", r"\1 ", text)
    text = re.sub(r"\s+", " ", text.strip())
    text = ["qqq" if any(char.isdigit() for char in word) else word for word in text.split(" ")]
    return " ".join(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Pt stable . . . then home", "pt stable . then home"),
        ("went home... Dx: none", "went home . dx : none"),
        ("a -- b - - - c", "a - b - c"),
        ("Seen [** Doctor 12 **] and [**2101-1-5**]!!", "seen <DE> and <DE> !"),
        ("Hb 7.2 , x² ; ; ok", "hb qqq , qqq ; ok"),
    ],
)
def test_mimic_cleaner_collapses_spaced_and_ellipsis_runs_after_tokenisation_like_the_authors(text, expected):
    """J&W §3.1 / the authors' cleaner_mimic: regexes run on the spaCy tokens joined by spaces, so spaced runs
    (`. . .`) and spaCy's ellipsis token collapse to one symbol, and spaced de-identification spans become <DE>."""
    assert clean(text, mimic=True) == expected == _authors_cleaner_mimic(text)


def test_digit_mask_uses_str_isdigit_like_the_authors():
    """The authors' `any(char.isdigit() ...)` also catches superscript digits, which the regex `\\d` misses."""
    assert clean("area 5 m² and x³ but not x") == "area qqq qqq and qqq but not x"
    assert clean("x³", mimic=True) == "qqq"


def test_newsgroups_cleaner_keeps_last_char_of_nonword_runs():
    assert clean_newsgroups("end.") == "end ."
    assert "!" not in clean_newsgroups("wow !!! ok").split()


def test_keras_tokens_keep_apostrophes_and_split_html():
    assert keras_tokens("Don't<br />stop, NOW!") == "don't br stop now"


def test_sst_cleaner_drops_brackets_and_punctuation():
    assert clean_sst("-LRB- The film -RRB- is n't great .") == "the film is n t great"


# --- shared data: SST oracle and §3.5 sizes ---


def test_sst_tokenization_matches_authors_csv(shared_data):
    from attnexp.datasets.sst import read_sst

    ours = read_sst({s: shared_data / "sst" / f"{s}.txt" for s in ("train", "dev", "test")})
    theirs = pd.read_csv(shared_data / "sst" / "jw_sst_dataset.csv", keep_default_na=False)
    assert len(ours) == len(theirs)
    mismatched = [i for i, (a, b) in enumerate(zip(ours["text"], theirs["text"], strict=True)) if a.split() != b.split()]
    assert not mismatched, f"{len(mismatched)} sentences differ, first: {ours['text'][mismatched[0]]!r}"
    assert (ours["label"].to_numpy() == theirs["label"].to_numpy()).all()
    assert (ours["split"].to_numpy() == theirs["exp_split"].to_numpy()).all()


@pytest.mark.parametrize(
    ("quirk", "sizes", "test_counts"),
    [(False, (6356, 822, 1726), [863, 863]), (True, (6355, 821, 1725), [863, 862])],
)
def test_sst_sizes(shared_data, quirk, sizes, test_counts):
    _, meta = preprocess(get_dataset("sst"), shared_data, implicit_extremes=quirk)
    assert _sizes(meta) == sizes
    assert _counts(meta, "test") == test_counts
    assert tuple(meta["sizes_before_filter"].values()) == (6920, 872, 1821)
    assert len(meta["vocab"]) == 13826
    assert meta["verified_sha256"] == ["sst/train.txt", "sst/dev.txt", "sst/test.txt"]


def test_sst_all_splits_vocabulary_is_table1(shared_data):
    _, meta = preprocess(get_dataset("sst"), shared_data, vocab_fit_on="all_splits")
    assert len(meta["vocab"]) == 16175


@pytest.mark.parametrize(("name", "vocab"), [("babi1", 24), ("babi2", 38), ("babi3_1k", 39)])
def test_babi_sizes_vocab_and_entities(shared_data, name, vocab):
    instances, meta = preprocess(get_dataset(name), shared_data)
    expected = (850, 150, 1000) if name == "babi3_1k" else (8500, 1500, 1000)
    assert _sizes(meta) == expected
    assert len(meta["vocab"]) == vocab
    assert len(meta["classes"]) == 36 and meta["classes"] == sorted(meta["classes"])
    assert meta["comparable"] == (name != "babi3_1k")


def test_agnews_testonly_fallback(shared_data):
    _, meta = preprocess(get_dataset("agnews_testonly"), shared_data)
    assert _sizes(meta) == (2584, 456, 760)
    assert _counts(meta, "test") == [380, 380]
    assert meta["comparable"] is False and meta["note"]
    _, quirk = preprocess(get_dataset("agnews_testonly"), shared_data, implicit_extremes=True)
    assert sum(_sizes(quirk)) < sum(_sizes(meta))


def test_snli_devtrain_fallback(shared_data):
    instances, meta = preprocess(get_dataset("snli_devtrain"), shared_data)
    assert _sizes(meta) == (8365, 1477, 9824)
    assert meta["classes"] == ["contradiction", "entailment", "neutral"]
    assert _counts(meta, "test") == [3237, 3368, 3219]
    assert instances["question"].map(len).min() >= 2


@pytest.mark.slow
def test_newsgroups_sizes(shared_data):
    _, meta = preprocess(get_dataset("20news"), shared_data)
    assert tuple(meta["sizes_before_filter"].values()) == (1236, 310, 387)
    assert meta["sizes"]["test"] == 357
    assert _counts(meta, "test") == [179, 178]
    assert abs(len(meta["vocab"]) - 6515) / 6515 < 0.01


@pytest.mark.slow
def test_imdb_sizes_within_one_percent(shared_data):
    _, meta = preprocess(get_dataset("imdb"), shared_data)
    for got, want in zip(_sizes(meta), (17200, 4300, 4346), strict=True):
        assert abs(got - want) / want < 0.01
    assert abs(len(meta["vocab"]) - 12460) / 12460 < 0.01


# --- user-supplied data: fixtures in the official formats ---


def test_adr_reader_on_fixture(tmp_path):
    rows = [(f"tweet {i} about drug {'x ' * (6 + i % 5)}", i % 2, "test" if i % 5 == 0 else "train") for i in range(60)]
    pd.DataFrame(rows, columns=["text", "label", "exp_split"]).to_csv(tmp_path / "adr.csv", index=False)
    instances, meta = preprocess(get_dataset("adr"), None, user_files={"adr": {"csv": str(tmp_path / "adr.csv")}})
    assert meta["sizes"]["test"] == 12
    assert meta["sizes"]["dev"] == 8  # ceil(0.15 * 48)
    assert set(instances["label"]) == {0, 1}


def _cnn_block(i: int) -> str:
    answer = f"@entity{i % 3}"
    passage = f"@entity{i % 3} met @entity{3 + i % 2} in the city of @entity7 on day {i}"
    return f"who did @placeholder meet\n{answer}\n{passage}\n"


def test_cnn_reader_candidates_and_vocab(tmp_path):
    files = {}
    for split, n in (("train", 20), ("dev", 5), ("test", 6)):
        files[split] = tmp_path / f"{split}.txt"
        files[split].write_text("\n".join(_cnn_block(i) for i in range(n)))
    spec = get_dataset("cnn")
    instances, meta = preprocess(spec, None, user_files={"cnn": {k: str(v) for k, v in files.items()}})
    assert meta["classes"] == ["@entity0", "@entity1", "@entity2"]
    assert set(meta["classes"]) <= set(meta["vocab"])
    batch = collate(instances.iloc[:4])
    assert batch.candidates.shape == (4, 3)
    assert batch.candidates[torch.arange(4), batch.labels].all()


def test_cnn_reader_rejects_truncated_file(tmp_path):
    from attnexp.datasets.cnn import read_cnn_file

    path = tmp_path / "train.txt"
    path.write_text(_cnn_block(0) + "\nwho did @placeholder meet\n@entity1\n")
    with pytest.raises(ValueError, match="truncated"):
        read_cnn_file(path, "train")


def _mimic_fixture(tmp_path: Path) -> dict:
    notes, diagnoses = [], []
    codes = {
        100: ["25000", "4019"],
        101: ["2851"],
        102: ["28529"],
        103: ["2851", "28521"],
        104: ["4019"],
        105: ["25001"],
    }
    for hadm in range(100, 140):
        text = f"Admission [**2101-1-{hadm % 28 + 1}**] patient ===== stable " + "word " * (10 + hadm % 7)
        notes.append({"ROW_ID": hadm, "SUBJECT_ID": hadm, "HADM_ID": hadm, "CATEGORY": "Discharge summary", "TEXT": text})
        notes.append({"ROW_ID": 1000 + hadm, "SUBJECT_ID": hadm, "HADM_ID": hadm, "CATEGORY": "Nursing", "TEXT": "ignored"})
        for code in codes.get(hadm, ["2851"] if hadm % 2 else ["28522", "25000"]):
            diagnoses.append({"ROW_ID": len(diagnoses), "SUBJECT_ID": hadm, "HADM_ID": hadm, "SEQ_NUM": 1, "ICD9_CODE": code})
    pd.DataFrame(notes).to_csv(tmp_path / "NOTEEVENTS.csv", index=False)
    pd.DataFrame(diagnoses).to_csv(tmp_path / "DIAGNOSES_ICD.csv", index=False)
    files = {"notes": tmp_path / "NOTEEVENTS.csv", "diagnoses": tmp_path / "DIAGNOSES_ICD.csv"}
    for split, ids in (("train", range(100, 124)), ("dev", range(124, 130)), ("test", range(130, 140))):
        (tmp_path / f"{split}_50_hadm_ids.csv").write_text("".join(f"{h}\n" for h in ids))
        files[f"{split}_ids"] = tmp_path / f"{split}_50_hadm_ids.csv"
    return {k: str(v) for k, v in files.items()}


def test_mimic_diabetes_and_anemia_on_fixture(tmp_path):
    from attnexp.datasets.mimic import dotted_icd9

    assert dotted_icd9("25000") == "250.00" and dotted_icd9("E8790") == "E879.0"
    files = _mimic_fixture(tmp_path)
    diabetes, meta = preprocess(get_dataset("diabetes"), None, user_files={"mimic": files})
    assert meta["sizes_before_filter"] == {"train": 24, "dev": 6, "test": 10}
    by_id = dict(zip(diabetes["instance_id"], diabetes["label"], strict=True))
    assert by_id["diabetes/train-100"] == 1 and by_id["diabetes/train-105"] == 0 and by_id["diabetes/train-101"] == 0
    assert "<DE>" in meta["vocab"] and "ignored" not in meta["vocab"]
    anemia, meta = preprocess(
        get_dataset("anemia"), None, user_files={"mimic": {"notes": files["notes"], "diagnoses": files["diagnoses"]}}
    )
    ids = set(anemia["instance_id"].str.split("/").str[1])
    assert {"100", "103", "104", "105"}.isdisjoint(ids)  # no anemia code, both types, none, none
    assert sum(meta["sizes"].values()) == 40 - 4


def test_missing_user_files_name_the_config_key():
    from attnexp.datasets.acquire import DataError

    with pytest.raises(DataError, match=r"data\.user_files\.mimic\.notes"):
        preprocess(get_dataset("anemia"), None, user_files={})


# --- the official-archive layout reads the same as the shared copies ---


def _same_instances(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    columns = [c for c in a.columns if c != "instance_id"]
    return a[columns].reset_index(drop=True).equals(b[columns].reset_index(drop=True))


@pytest.mark.slow
def test_sst_and_babi_official_layout_match_shared(shared_data, tmp_path):
    import shutil

    from attnexp.datasets.babi_format import BABI_TASK_FILES

    (tmp_path / "trees").mkdir()
    for split in ("train", "dev", "test"):
        shutil.copy(shared_data / "sst" / f"{split}.txt", tmp_path / "trees" / f"{split}.txt")
    root = tmp_path / "tasks_1-20_v1-2"
    for language, task, split in [("en-10k", 1, "train"), ("en", 1, "test"), ("en-10k", 2, "train"), ("en", 3, "train")]:
        target = root / language / f"{BABI_TASK_FILES[task]}_{split}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shared_data / "babi" / language / target.name, target)
    for name in ("sst", "babi1"):
        official, meta = preprocess(get_dataset(name), tmp_path)
        shared, _ = preprocess(get_dataset(name), shared_data)
        assert next(iter(meta["raw_files"].values())).startswith(str(tmp_path))
        assert _same_instances(official, shared)


@pytest.mark.slow
def test_snli_official_jsonl_matches_shared_tsv(shared_data, tmp_path):
    import csv
    import json

    names = {0: "entailment", 1: "neutral", 2: "contradiction"}
    (tmp_path / "snli_1.0").mkdir()
    for split in ("dev", "test"):
        frame = pd.read_csv(
            shared_data / "snli" / f"snli_1.0_{split}.tsv", sep="\t", quoting=csv.QUOTE_NONE, keep_default_na=False
        )
        records = [
            {"sentence1": p, "sentence2": h, "gold_label": names[int(y)], "pairID": str(i)}
            for i, (p, h, y) in enumerate(zip(frame["premise"], frame["hypothesis"], frame["label"], strict=True))
        ]
        records.insert(3, {"sentence1": "a", "sentence2": "b", "gold_label": "-", "pairID": "nogold"})
        (tmp_path / "snli_1.0" / f"snli_1.0_{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    official, meta = preprocess(get_dataset("snli_devtrain"), tmp_path)
    shared, _ = preprocess(get_dataset("snli_devtrain"), shared_data)
    assert _same_instances(official, shared)
