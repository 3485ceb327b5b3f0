"""Datasets declared in the config (`user_datasets`): reading, splitting, and validation messages before any job."""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from attnexp import paths
from attnexp.config import ConfigError
from attnexp.data.preprocess import preprocess, read_preprocessed
from attnexp.datasets import DATASETS, DatasetSpec
from attnexp.datasets.user import declaration_problems, read_columns, read_header, read_table
from attnexp.pipeline.data import run_preprocess
from attnexp.pipeline.plan import Plan
from attnexp.pipeline.policy import datasets_of
from attnexp.pipeline.settings import PreprocessSettings
from tests.conftest import REPO
from tests.factories import validated_config

FIXTURES = Path(__file__).parent / "fixtures"
REVIEWS = FIXTURES / "reviews.csv"  # id,review,sentiment,part (train / validation / test), 60 rows, pos / neg
PAIRS = FIXTURES / "pairs.jsonl"  # premise, hypothesis, gold (3 classes), 24 rows


def reviews(**changes) -> dict:
    return {"task": "bc", "path": str(REVIEWS), "text": "review", "label": "sentiment", **changes}


def declare(
    datasets: list[str] | None = None, hyperparameters: dict | None = None, wp: dict | None = None, **declarations
) -> dict:
    sections = {"hyperparameters": hyperparameters or {}, **({"wp": wp} if wp else {})}
    return validated_config(datasets=datasets or list(declarations), user_datasets=declarations, **sections)


def spec(config: dict, name: str) -> DatasetSpec:
    """The spec the pipeline finds for `name` in a validated config."""
    return datasets_of(config)[name]


def test_split_column_with_aliases_keeps_the_files_rows_and_the_pipeline_knows_the_name():
    config = declare(my_reviews=reviews(split_column="part"))
    assert "my_reviews" not in DATASETS  # validation leaves the registry alone
    assert Plan.from_config(config).datasets == ["my_reviews"] and "my_reviews" not in DATASETS
    found = spec(config, "my_reviews")
    instances, meta = preprocess(found, None)
    raw = pd.read_csv(REVIEWS)
    assert meta["sizes"] == {"train": 40, "dev": 10, "test": 10}  # "validation" -> dev; no row is dropped
    assert meta["classes"] == ["neg", "pos"] and meta["task"] == "bc" and meta["tokenizer"] == "sst"
    first = instances[instances["instance_id"] == "my_reviews/row-0"].iloc[0]
    index = {w: i for i, w in enumerate(meta["vocab"])}
    expected = [index[w] for w in raw["review"][0].lower().replace(".", " ").replace(";", " ").split()]
    assert list(first["tokens"][1:-1]) == expected and first["label"] == meta["classes"].index(raw["sentiment"][0])


def test_missing_splits_are_carved_with_the_declared_fractions_and_seed():
    fractions = {"dev": 0.25, "test": 0.25}
    config = declare(a=reviews(split_fractions=fractions, split_seed=1), b=reviews(split_fractions=fractions, split_seed=2))
    sizes, test_ids = {}, {}
    for name in ("a", "b"):
        instances, meta = preprocess(spec(config, name), None)
        sizes[name] = meta["sizes"]
        test_ids[name] = {i.split("/")[1] for i in instances.loc[instances["split"] == "test", "instance_id"]}
    assert sizes["a"] == sizes["b"] == {"train": 33, "dev": 12, "test": 15}  # ceil(.25 * 60), then ceil(.25 * 45)
    assert test_ids["a"] != test_ids["b"]


def test_files_per_split_and_a_jsonl_nli_dataset_with_a_second_text(tmp_path):
    rows = [json.loads(line) for line in PAIRS.read_text().splitlines()]
    for split, part in (("train", rows[:16]), ("test", rows[16:])):
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))
    files = {"train": str(tmp_path / "train.jsonl"), "test": str(tmp_path / "test.jsonl")}
    nli = {"task": "nli", "files": files, "text": "premise", "question": "hypothesis", "label": "gold"}
    config = declare(my_pairs={**nli, "tokenizer": "whitespace", "length_bounds": [None, None]})
    instances, meta = preprocess(spec(config, "my_pairs"), None)
    assert meta["sizes"]["test"] == 8 and meta["sizes"]["train"] + meta["sizes"]["dev"] == 16
    assert meta["classes"] == ["contradiction", "entailment", "neutral"]
    index = {w: i for i, w in enumerate(meta["vocab"])}
    test0 = instances[instances["instance_id"] == "my_pairs/test-0"].iloc[0]
    assert list(test0["question"]) == [2, *[index.get(w, 1) for w in rows[16]["hypothesis"].split()], 3]


def test_rows_dropped_by_each_step_are_counted_in_meta_and_the_job_log(tmp_path, capsys):
    frame = pd.read_csv(REVIEWS, dtype=str, keep_default_na=False)
    extra = [("?!", "train"), ("", "test"), ("...", "test"), (" ; , ", "test"), ("Too short.", "dev")]
    extra += [("Far too short here.", "test")] * 2
    rows = [{"id": str(100 + i), "review": text, "sentiment": "pos", "part": part} for i, (text, part) in enumerate(extra)]
    path = tmp_path / "reviews.csv"
    pd.concat([frame, pd.DataFrame(rows)], ignore_index=True).to_csv(path, index=False)
    config = declare(my_reviews=reviews(path=str(path), split_column="part"))
    files = {k: tmp_path / v for k, v in paths.preprocessed_files("my_reviews").items()}
    plan = Plan.from_config(config)
    run_preprocess(
        inputs=plan.raw_files("my_reviews"),
        outputs=files,
        settings=PreprocessSettings.from_plan(plan, "my_reviews"),
    )
    _, meta = read_preprocessed(files["instances"], files["meta"])
    assert meta["sizes"] == {"train": 40, "dev": 10, "test": 10}
    assert meta["sizes_before_filter"] == {"train": 40, "dev": 11, "test": 12}
    assert meta["dropped"] == {
        "empty after tokenization": {"train": 1, "dev": 0, "test": 3},
        "length filter": {"train": 0, "dev": 1, "test": 2},
    }
    log = capsys.readouterr().out
    assert (
        "my_reviews: dropped 4 row(s) that had no token left after the sst tokenizer (empty or punctuation-only text) "
        "(train: 1, dev: 0, test: 3)"
    ) in log
    assert (
        "my_reviews: dropped 3 row(s) that were outside the length filter (keep 5 < tokens < inf, from length_bounds) "
        "(train: 0, dev: 1, test: 2)"
    ) in log


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        (reviews(path="nowhere/reviews.csv"), "'user_datasets.mine.path': file nowhere/reviews.csv does not exist"),
        (reviews(text="body"), "column(s) 'body' (text) not in"),
        (reviews(split_column="fold"), "column(s) 'fold' (split) not in"),
        (reviews(classes=["neg", "positive"]), "label(s) ['pos'] of the data are not listed"),
        ({**reviews(), "task": "nli"}, "'user_datasets.mine.question': a nli dataset needs the column"),
        ({**reviews(), "task": "regr"}, "'user_datasets.mine.task': 'regr' is not allowed; choose one of bc, nli, qa"),
        (reviews(files={"train": str(REVIEWS)}), "give either `path` (one file) or `files`"),
        (reviews(path=str(PAIRS), text="premise", label="gold"), "a bc dataset needs exactly 2 distinct labels, the data has 3"),
    ],
)
def test_a_bad_declaration_names_the_key_file_column_or_value(declaration, message):
    with pytest.raises(ConfigError) as error:
        declare(mine=declaration)
    assert message in str(error.value)


def test_composed_and_decomposed_accents_are_one_label_and_one_word(tmp_path):
    """NFC and NFD spellings of "neutré" / "café" print the same: they are one class and one vocabulary word."""
    composed, decomposed = "neutr\u00e9", "neutre\u0301"
    rows = [("caf\u00e9 good" if i % 2 else "cafe\u0301 good", composed if i % 4 < 2 else decomposed) for i in range(20)]
    rows += [("plain bad text", "positif")] * 20
    path = tmp_path / "accents.csv"
    pd.DataFrame(rows, columns=["review", "sentiment"]).to_csv(path, index=False)
    config = declare(accents=reviews(path=str(path), tokenizer="whitespace", length_bounds=[None, None], min_df=1))
    instances, meta = preprocess(spec(config, "accents"), None)
    assert meta["classes"] == [composed, "positif"]
    assert [w for w in meta["vocab"] if w.startswith("caf")] == ["caf\u00e9"]
    assert (instances["label"] == 0).sum() == 20
    config = declare(listed=reviews(path=str(path), classes=[decomposed, "positif"], length_bounds=[None, None]))
    assert spec(config, "listed").classes == (composed, "positif")
    with pytest.raises(ConfigError, match=r"'user_datasets.twice.classes': .* spells one class twice"):
        declare(twice=reviews(path=str(path), classes=[composed, decomposed]))


def test_labels_that_differ_only_by_case_or_spaces_are_refused_after_nfc(tmp_path):
    path = tmp_path / "clash.csv"
    labels = ["Neutre\u0301", "neutr\u00e9 ", "positif"]
    pd.DataFrame({"review": [f"text number {i}" for i in range(30)], "sentiment": labels * 10}).to_csv(path, index=False)
    with pytest.raises(ConfigError) as error:
        declare(clash=reviews(path=str(path)))
    assert (
        "'user_datasets.clash.label': label values that differ only by case or surrounding spaces would become separate "
        "classes ('Neutr\u00e9' vs 'neutr\u00e9 ')"
    ) in str(error.value)


def test_a_missing_column_lists_the_files_columns_and_a_builtin_name_is_refused():
    with pytest.raises(ConfigError) as error:
        declare(mine=reviews(label="stars"))
    assert "its columns are: id, review, sentiment, part" in str(error.value)
    with pytest.raises(ConfigError, match="'sst' is a built-in dataset; give your dataset another name"):
        declare(datasets=["syn_sentiment"], sst=reviews())
    with pytest.raises(ConfigError, match="'my_reviews' is not allowed"):
        validated_config(datasets=["my_reviews"])  # not declared


def test_a_declared_nli_dataset_is_refused_by_wp_and_its_hyperparameters_key_is_known():
    nli = {"task": "nli", "path": str(PAIRS), "text": "premise", "question": "hypothesis", "label": "gold"}
    config = declare(my_pairs=nli, hyperparameters={"my_pairs": {"epochs": 1}})
    assert config["user_datasets"]["my_pairs"]["tokenizer"] == "sst"  # the schema's defaults are filled in
    with pytest.raises(ConfigError, match="'my_pairs' is a nli dataset; W&P tests are binary only"):
        declare(my_pairs=nli, wp={"datasets": ["my_pairs"]})


def test_validation_reads_only_the_header_of_a_jsonl_file(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"premise": "a", "gold": "x"}) + "\n" + "{not json\n")
    assert read_header(path, "jsonl") == ["premise", "gold"]


# A process without the jobs' stack (a plain Snakemake environment parsing the Snakefile): importing any of it fails.
NO_STACK = """import json, sys
for name in ("pandas", "numpy", "scipy", "sklearn", "torch", "pyarrow"):
    sys.modules[name] = None
from attnexp.datasets.user import declaration_problems
declarations = json.loads(sys.stdin.read())
print(json.dumps({name: declaration_problems(name, d) for name, d in declarations.items()}))
"""


def test_declarations_are_checked_without_pandas(tmp_path):
    """Config validation runs when the Snakefile is parsed: a CSV, a TSV and a JSONL declaration, sound or not, get
    the same problems in a process where pandas (numpy, ...) cannot be imported as here, where it can."""
    tsv = tmp_path / "reviews.tsv"
    frame = pd.read_csv(REVIEWS, dtype=str, keep_default_na=False)
    frame.loc[3, "sentiment"] = ""
    frame.to_csv(tsv, sep="\t", index=False)
    nli = {"task": "nli", "path": str(PAIRS), "text": "premise", "question": "hypothesis", "label": "gold"}
    declarations = {
        "csv": reviews(split_column="part"),
        "csv_classes": reviews(classes=["neg", "positive"]),
        "tsv": reviews(path=str(tsv), split_column="part"),
        "jsonl": nli,
        "jsonl_bc": {**nli, "task": "bc", "question": None},
    }
    expected = {name: declaration_problems(name, d) for name, d in declarations.items()}
    assert expected["csv"] == expected["jsonl"] == []
    assert expected["tsv"] == [f"config key 'user_datasets.tsv.path': {tsv} has an empty 'sentiment' (label) in data row 4"]
    assert "label(s) ['pos'] of the data are not listed" in expected["csv_classes"][0]
    assert "a bc dataset needs exactly 2 distinct labels, the data has 3" in expected["jsonl_bc"][0]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run(
        [sys.executable, "-c", NO_STACK], input=json.dumps(declarations), env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout) == expected


def _pandas_header(path: Path, fmt: str) -> list[str]:
    """The header as pandas reads it (the check did so before it read files with the standard library)."""
    if fmt == "jsonl":
        with pd.read_json(path, lines=True, chunksize=1, dtype=False) as reader:
            first = next(iter(reader), None)
        return [] if first is None else [str(c) for c in first.columns]
    return [str(c) for c in pd.read_csv(path, sep={"csv": ",", "tsv": "\t"}[fmt], nrows=0).columns]


def _outcome(read, *args):
    try:
        result = read(*args)
    except ValueError as error:  # pandas' EmptyDataError, ParserError and UnicodeDecodeError are ValueErrors
        return "error", str(error)
    return "read", result if isinstance(result, list | dict) else {c: list(result[c]) for c in result.columns}


ODD_FILES = {  # name -> (format, file content): what the standard-library readers must read as pandas does
    "header_only": ("csv", b"review,sentiment\n"),
    "no_newline": ("csv", b"review,sentiment\ngood,pos"),
    "bom_blank_and_whitespace_lines": ("csv", b"\xef\xbb\xbf\n  \nreview,sentiment\ngood,pos\n\n \t \nbad,neg\n"),
    "quotes": ("csv", b'review,sentiment\n"a, ""quoted""\nreview",pos\n"x"y,"neg"\n'),
    "short_and_long_rows": ("csv", b"id,review,sentiment\n1,good\n2,bad,neg,extra\n"),
    "first_row_longer": ("csv", b"review,sentiment,part\n0,good,pos,train\n1,bad,neg,test\n"),
    "empty_and_repeated_names": ("csv", b"review,,sentiment,review,review.1\ngood,x,pos,again,more\n"),
    "crlf_tsv": ("tsv", b"review\tsentiment\r\ngood, really\tpos\r\nbad\t\r\n"),
    "empty": ("csv", b""),
    "blank_only": ("csv", b"\n  \n"),
    "open_quote": ("csv", b'review,sentiment\ngood,pos\n"bad,neg\n'),
    "undecodable_label": ("csv", b"review,sentiment\ngood,p\xffs\n"),
    "undecodable_unused_cell": ("csv", b"id,review,sentiment\n\xff,good,pos\n"),
    "json_numbers_and_missing": ("jsonl", b'{"t": "a", "y": 1}\n\n{"t": "b"}\n{"t": "c", "y": null}\n{"t": "d", "y": 2}\n'),
    "json_mixed_types": (
        "jsonl",
        b'{"t": "a", "y": 1, "z": true}\r\n{"t": "b", "y": "pos", "z": false}\n{"t": 2.5, "y": [1], "z": null}\n',
    ),
    "json_blank_first_line": ("jsonl", b'\n{"t": "a", "y": "pos"}\n'),
    "json_empty": ("jsonl", b""),
}


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("name", list(ODD_FILES))
def test_validation_reads_a_file_as_the_jobs_pandas_reader_does(tmp_path, name, compressed):
    """The header, the cells (as strings) and the errors of `read_header` / `read_columns` are pandas' (of
    `read_table`, which the jobs use): validation accepts what the jobs can read, with the same messages."""
    fmt, content = ODD_FILES[name]
    path = tmp_path / f"data.{fmt}{'.gz' if compressed else ''}"
    path.write_bytes(gzip.compress(content) if compressed else content)
    header = _outcome(read_header, path, fmt)
    assert header == _outcome(_pandas_header, path, fmt)
    if header[0] == "read":
        for columns in [[c] for c in header[1]] + [header[1][1:], header[1]]:
            if columns:
                assert _outcome(read_columns, path, fmt, columns) == _outcome(read_table, path, fmt, columns), columns
