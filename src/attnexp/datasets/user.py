"""Datasets declared in the config (`user_datasets.<name>`): a CSV, TSV or JSONL file (or one per split) with a
text column, a label column and, for NLI/QA, a second text column. No Python needed.

`declaration_problems` checks a declaration against its files before any job runs (reading only the header,
the label column and the split column); `user_spec` turns a validated declaration into a `DatasetSpec`, and
`user_specs` does so for a config's declarations, which the pipeline looks up beside the built-in registry (the
registry itself never holds them) so that every stage treats them like built-in datasets.
Relative paths are taken from the working directory (where Snakemake runs), as for `data.user_files`.

The check runs when the Snakefile is parsed, where the jobs' scientific stack may be absent (a plain Snakemake
environment), so it reads the files with the standard library only (`read_header`, `read_columns`: the strings
pandas' readers give the jobs, see `read_table`); only a `.zst` file, which the standard library cannot
decompress, is read with pandas there too.
"""

import bz2
import csv
import gzip
import io
import json
import lzma
import tarfile
import unicodedata
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, closing, contextmanager
from itertools import chain
from pathlib import Path
from typing import IO, TYPE_CHECKING

from attnexp.datasets.registry import DATASETS, TASKS, DatasetSpec
from attnexp.datasets.tokenize import TOKENIZERS

if TYPE_CHECKING:  # pandas and scikit-learn load on first use: the Snakefile imports this module at parse time
    import pandas as pd

CONFIG_KEY = "user_datasets"
FORMATS = {"csv": ",", "tsv": "\t", "jsonl": None}
SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
COMPRESSION = (".gz", ".bz2", ".xz", ".zip", ".zst")
SPLIT_ALIASES = {"train": "train", "dev": "dev", "test": "test", "validation": "dev", "valid": "dev", "val": "dev"}
BUILTIN = frozenset(DATASETS)  # the registry's names: no config adds to it


def file_format(path: str | Path, declared: str | None = None) -> str:
    """`csv`, `tsv` or `jsonl`: the declared `format`, else from the suffix (a compression suffix is skipped)."""
    if declared:
        return declared
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in COMPRESSION:
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in SUFFIXES:
        return SUFFIXES[suffixes[-1]]
    raise ValueError(f"cannot tell the format of {path} from its suffix; set `format:` to one of {', '.join(FORMATS)}")


def read_table(path: str | Path, fmt: str, columns: list[str] | None = None) -> "pd.DataFrame":
    """The file as strings (pandas readers; empty cells stay empty strings), optionally only `columns`."""
    import pandas as pd

    if fmt == "jsonl":
        frame = pd.read_json(path, lines=True, dtype=False)
        frame = frame if columns is None else frame[columns]
        return frame.fillna("").astype(str)
    return pd.read_csv(path, sep=FORMATS[fmt], usecols=columns, dtype=str, keep_default_na=False)


# The standard-library readers of validation below give the header and the cells `read_table` gives the jobs
# (pandas' C parser for CSV / TSV, its ujson reader for JSONL) and pandas' error messages, but for invalid JSON
# (the message names the line) and the C parser's quirks with lone carriage returns next to blank lines.
# pandas.io.common.extension_to_compression: the compression pandas infers from a file name (first match wins).
PANDAS_COMPRESSION = {
    ".tar": "tar",
    ".tar.gz": "tar",
    ".tar.bz2": "tar",
    ".tar.xz": "tar",
    ".gz": "gzip",
    ".bz2": "bz2",
    ".zip": "zip",
    ".xz": "xz",
    ".zst": "zstd",
}
_OPENERS = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}
_END = "\x00attnexp: end of file\x00"  # a last line `_END<delimiter>_END` after the file's: an open quote swallows it
_FIELD_LIMIT = 2**31 - 1  # the csv module refuses fields over 128 KiB by default; pandas has no limit


def compression(path: str | Path) -> str | None:
    """How pandas decompresses `path` (from its name, as `compression="infer"`), None when it is plain."""
    name = str(path).lower()
    return next((method for suffix, method in PANDAS_COMPRESSION.items() if name.endswith(suffix)), None)


@contextmanager
def _open_text(path: str | Path, encoding: str, errors: str, newline: str) -> Iterator[IO[str]]:
    """The decompressed text of `path`, as pandas opens it (one member in a zip / tar archive)."""
    method = compression(path)
    with ExitStack() as stack:
        if method is None:
            raw = stack.enter_context(open(path, "rb"))
        elif method in _OPENERS:
            raw = stack.enter_context(_OPENERS[method](path, "rb"))
        elif method == "zip":
            archive = stack.enter_context(zipfile.ZipFile(path))
            names = archive.namelist()
            if not names:
                raise ValueError(f"Zero files found in ZIP file {path}")
            if len(names) > 1:
                raise ValueError(f"Multiple files found in ZIP file. Only one file per ZIP: {names}")
            raw = stack.enter_context(archive.open(names[0]))
        elif method == "tar":
            archive = stack.enter_context(tarfile.open(path, "r"))
            names = archive.getnames()
            if not names:
                raise ValueError(f"Zero files found in TAR archive {path}")
            if len(names) > 1:
                raise ValueError(f"Multiple files found in TAR archive. Only one file per TAR archive: {names}")
            member = archive.extractfile(names[0])
            if member is None:
                raise ValueError(f"{names[0]} in TAR archive {path} is not a file")
            raw = stack.enter_context(member)
        else:
            raise ValueError(f"no standard-library reader for {method} compression")  # zstd: the callers use pandas
        yield stack.enter_context(io.TextIOWrapper(raw, encoding=encoding, errors=errors, newline=newline))


def _checked(field: str) -> str:
    """`field`, or the UnicodeDecodeError pandas raises for it: its C parser decodes each cell it keeps on its own
    (the text is read with surrogateescape, so an undecodable byte survives until its cell is used)."""
    if not field.isascii():
        try:
            field.encode("utf-8")
        except UnicodeEncodeError:
            field.encode("utf-8", "surrogateescape").decode("utf-8")  # raises with pandas' message and position
    return field


def _csv_records(path: str | Path, fmt: str) -> Iterator[tuple[int, list[str] | None]]:
    """(row, fields) of each record of a CSV / TSV file as pandas' C parser tokenizes it (default quoting):
    `row` counts every record from 0, the header and blank ones too; a blank or whitespace-only line gives None.
    A quote left open raises pandas' error when the reader gets there."""
    delimiter = FORMATS[fmt]
    spaces = set(" \t") - {delimiter}
    last, eat = [""], [False]

    def lines(handle: IO[str]) -> Iterator[str]:
        for line in handle:
            if eat[0] and line.startswith(delimiter):  # pandas drops a delimiter right after a blank line ended by
                line = line[1:]  # a lone carriage return
            eat[0], last[0] = False, line
            yield line
        yield f"{_END}{delimiter}{_END}"

    limit = csv.field_size_limit()
    with _open_text(path, "utf-8-sig", "surrogateescape", "") as handle:
        try:
            csv.field_size_limit(_FIELD_LIMIT)
            for row, fields in enumerate(csv.reader(lines(handle), delimiter=delimiter)):
                if fields == [_END, _END]:
                    return
                if fields and fields[-1].endswith(_END):
                    raise ValueError(f"Error tokenizing data. C error: EOF inside string starting at row {row}")
                blank = not fields or (len(fields) == 1 and set(fields[0]) <= spaces and last[0].rstrip("\r\n") == fields[0])
                eat[0] = blank and last[0].endswith("\r")
                yield row, None if blank else fields
        finally:
            csv.field_size_limit(limit)


def _unnamed_and_mangled(fields: list[str]) -> list[str]:
    """Header cells as pandas names the columns: `Unnamed: <i>` for an empty one, `.1`, `.2`... on repeats
    (named columns first, so that a given name is kept and an unnamed one is mangled)."""
    names = [_checked(name) or f"Unnamed: {i}" for i, name in enumerate(fields)]
    counts: dict[str, int] = {}
    for i in [i for i, name in enumerate(fields) if name] + [i for i, name in enumerate(fields) if not name]:
        name = base = names[i]
        count = counts.get(name, 0)
        while count:
            counts[base] = count + 1
            name = f"{base}.{count}"
            count = count + 1 if name in names else counts.get(name, 0)
        names[i] = name
        counts[name] = count + 1
    return names


def _csv_start(records: Iterator[tuple[int, list[str] | None]]) -> tuple[list[str], list[str] | None]:
    """The column names (the first record that is not blank: pandas' header=0) and the first data row, None if
    there is none: pandas' header read tokenizes both (a quote left open in either stops it), then names the
    columns."""
    raw = next((fields for _, fields in records if fields is not None), None)
    if raw is None:
        raise ValueError("No columns to parse from file")  # pandas' EmptyDataError
    first = next((fields for _, fields in records if fields is not None), None)
    return _unnamed_and_mangled(raw), first


def _json_record(line: str, number: int) -> object:
    try:
        return json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"invalid JSON in line {number}: {err.msg} (character {err.pos + 1})") from None


def read_header(path: str | Path, fmt: str) -> list[str]:
    """Column names from the first line only (JSONL: the keys of the first record), as pandas reads them."""
    if compression(path) == "zstd":
        return _pandas_header(path, fmt)
    if fmt == "jsonl":
        with _open_text(path, "utf-8", "strict", "") as handle:
            line = next(iter(handle), "").strip()
        if not line:
            return []  # pandas reads no record from a blank first line
        first = _json_record(line, 1)
        if isinstance(first, dict):
            return [str(key) for key in first]
        return [str(i) for i in range(len(first))] if isinstance(first, list) else ["0"]
    with closing(_csv_records(path, fmt)) as records:
        header, _ = _csv_start(records)
    return header


def read_columns(path: str | Path, fmt: str, columns: list[str]) -> dict[str, list[str]]:
    """Column -> its cells as the strings `read_table(path, fmt, columns)` gives (no pandas: validation runs where
    the jobs' stack may be absent). The columns must be in `read_header(path, fmt)`."""
    if compression(path) == "zstd":
        frame = read_table(path, fmt, columns)
        return {column: [str(v) for v in frame[column]] for column in columns}
    if fmt == "jsonl":
        return _json_columns(path, columns)
    with closing(_csv_records(path, fmt)) as records:
        header, first = _csv_start(records)
        # pandas: a first data row longer than the header starts with index columns, which shift the columns it
        # picks (unless it picks them all); a short row has empty cells
        shift = max(len(first) - len(header), 0) if first is not None and len(set(columns)) < len(header) else 0
        positions = {column: header.index(column) + shift for column in columns}
        rows = [] if first is None else chain([first], (fields for _, fields in records if fields is not None))
        index: list[str] = []  # the index columns' cells, which pandas decodes too
        cells: dict[str, list[str]] = {column: [] for column in columns}
        for fields in rows:
            index += fields[:shift]
            for column, i in positions.items():
                cells[column].append(fields[i] if i < len(fields) else "")
    for cell in index:  # the cells are decoded once the file is tokenized, as pandas does
        _checked(cell)
    return {column: [_checked(cell) for cell in cells[column]] for column in columns}


_MISSING = object()


def _json_columns(path: str | Path, columns: list[str]) -> dict[str, list[str]]:
    """pandas reads the whole file, one record a line (blank ones skipped), into typed columns, then
    `fillna("").astype(str)`: a number column with a missing value or a float holds floats (`1` reads `1.0`)."""
    with _open_text(path, "utf-8", "strict", "") as handle:
        text = handle.read()
    raw: dict[str, list[object]] = {column: [] for column in columns}
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line:
            continue
        record = _json_record(line, number)
        if not isinstance(record, dict):
            raise ValueError(f"line {number} is not a JSON object (a record of named fields)")
        for column in columns:
            raw[column].append(record.get(column, _MISSING))
    return {column: _json_strings(values) for column, values in raw.items()}


def _json_strings(values: list[object]) -> list[str]:
    """One column's cells as pandas types and then prints them: missing, null and NaN read "", numbers (no bool)
    with a float or a missing cell read as floats, unless an int over int64 meets a negative one (objects)."""
    missing = [v is _MISSING or v is None or (isinstance(v, float) and v != v) for v in values]
    present = [v for v, m in zip(values, missing, strict=True) if not m]
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in present)
    ints = [v for v in present if isinstance(v, int)]
    mixed = any(v >= 2**63 for v in ints) and any(v < 0 for v in ints)  # neither int64 nor uint64
    floats = numbers and not mixed and (any(missing) or len(ints) < len(present))
    return ["" if m else str(float(v)) if floats else str(v) for v, m in zip(values, missing, strict=True)]


def _pandas_header(path: str | Path, fmt: str) -> list[str]:
    """`read_header` of a file the standard library cannot decompress (`.zst`)."""
    import pandas as pd

    if fmt == "jsonl":
        with pd.read_json(path, lines=True, chunksize=1, dtype=False) as reader:
            first = next(iter(reader), None)
        return [] if first is None else [str(c) for c in first.columns]
    return [str(c) for c in pd.read_csv(path, sep=FORMATS[fmt], nrows=0).columns]


def nfc(text: str) -> str:
    """`text` in Unicode normal form C: a composed and a decomposed spelling ("é" as one code point, or "e" and a
    combining accent) print the same, so labels and texts are read as one class and one word."""
    return unicodedata.normalize("NFC", text)


def declared_files(declaration: Mapping) -> dict[str, str]:
    """Role -> path: `train`/`dev`/`test` from `files`, or `all` for one `path`."""
    if declaration.get("path"):
        return {"all": declaration["path"]}
    return {role: path for role, path in (declaration.get("files") or {}).items() if path}


def _columns(declaration: Mapping) -> dict[str, str]:
    """What each used column holds -> its name in the file."""
    roles = {"text": declaration["text"], "label": declaration["label"]}
    if declaration.get("question"):
        roles["question"] = declaration["question"]
    if declaration.get("split_column"):
        roles["split"] = declaration["split_column"]
    return roles


def declaration_problems(name: str, declaration: Mapping) -> list[str]:
    """Every problem of one schema-valid declaration, each naming the key, file, column or value and the fix."""
    key = f"{CONFIG_KEY}.{name}"
    if name in BUILTIN:
        return [f"config key '{key}': {name!r} is a built-in dataset; give your dataset another name"]
    problems = []
    task = declaration["task"]
    if task in ("nli", "qa") and not declaration.get("question"):
        problems.append(f"config key '{key}.question': a {task} dataset needs the column of its second text")
    if task == "bc" and declaration.get("question"):
        problems.append(f"config key '{key}.question': a bc dataset has one text; remove it or set task: nli / qa")
    if bool(declaration.get("path")) == bool(declaration.get("files")):
        problems.append(f"config key '{key}': give either `path` (one file) or `files` (train, and optionally dev, test)")
        return problems
    if declaration.get("split_column") and not declaration.get("path"):
        problems.append(f"config key '{key}.split_column': only with one `path`; with `files` each file is a split")
    problems += _shared_file_problems(key, declared_files(declaration))
    labels, splits = set(), set()
    for role, path in declared_files(declaration).items():
        where = f"config key '{key}." + ("path'" if role == "all" else f"files.{role}'")
        if not Path(path).is_file():
            problems.append(f"{where}: file {path} does not exist (relative paths start at the working directory)")
            continue
        try:
            fmt = file_format(path, declaration.get("format"))
            header = read_header(path, fmt)
        except _READ_ERRORS as err:
            problems.append(f"{where}: {_read_problem(path, err)}")
            continue
        columns = _columns(declaration)
        absent = [f"{column!r} ({what})" for what, column in columns.items() if column not in header]
        if absent:
            problems.append(f"{where}: column(s) {', '.join(absent)} not in {path}; its columns are: {', '.join(header)}")
            continue
        try:  # every used column: the jobs decode each cell they keep
            values = read_columns(path, fmt, list(dict.fromkeys(columns.values())))
        except _READ_ERRORS as err:
            problems.append(f"{where}: {_read_problem(path, err)}")
            continue
        if not values[columns["label"]]:
            problems.append(f"{where}: {path} has a header but no data rows; give a file with at least one row per class")
            continue
        if "" in values[columns["label"]]:
            row = values[columns["label"]].index("")
            problems.append(f"{where}: {path} has an empty {columns['label']!r} (label) in data row {row + 1}")
        labels |= {nfc(label) for label in values[columns["label"]]} - {""}  # as the jobs read them
        if "split" in columns:
            splits |= set(values[columns["split"]])
    problems += _label_problems(key, task, labels, declaration.get("classes"))
    unknown = sorted(splits - set(SPLIT_ALIASES))
    if unknown:
        problems.append(
            f"config key '{key}.split_column': value(s) {unknown[:5]} of column {declaration['split_column']!r} are not "
            f"split names; use {', '.join(SPLIT_ALIASES)}"
        )
    elif splits and "train" not in {SPLIT_ALIASES[s] for s in splits}:
        problems.append(f"config key '{key}.split_column': no row of column {declaration['split_column']!r} is 'train'")
    return problems


def _shared_file_problems(key: str, files: Mapping[str, str]) -> list[str]:
    """Splits given the same file: the model would be selected or tested on its training data."""
    seen: dict[Path, str] = {}
    problems = []
    for role in sorted(files, key=["all", "train", "dev", "test"].index):
        real = Path(files[role]).resolve()
        if real in seen:
            problems.append(
                f"config key '{key}.files': {role} and {seen[real]} are the same file ({files[role]}), so the model "
                f"would be {'tested' if role == 'test' else 'selected'} on rows it has already seen; give separate "
                f"files, or set {role}: null to carve it out of train"
            )
        seen.setdefault(real, role)
    return problems


_READ_ERRORS = (ValueError, OSError, EOFError, zipfile.BadZipFile, tarfile.TarError, lzma.LZMAError)


def _read_problem(path: str | Path, err: Exception) -> str:
    """What went wrong reading a declared file, and the fix."""
    if isinstance(err, UnicodeDecodeError):
        return (
            f"{path} is not UTF-8 text ({err.reason} at byte {err.start} of a cell: {err.object[err.start : err.end]!r}); "
            f"save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8 {Path(path).name} > new.csv`)"
        )
    kind = compression(path)
    if kind and isinstance(err, OSError | EOFError | zipfile.BadZipFile | tarfile.TarError | lzma.LZMAError):
        return f"{path} cannot be read as a {kind} file ({err}); check that it is not truncated, or rename it to its real type"
    fix = "fix the line or the file's quoting" if isinstance(err, ValueError) else "check that it is a readable file"
    return f"{path} cannot be read ({err}); {fix}"


def _label_problems(key: str, task: str, labels: set[str], classes: list[str] | None) -> list[str]:
    if not labels:
        return []
    alike: dict[str, list[str]] = {}
    for label in sorted(labels):  # in NFC already: composed and decomposed accents are one label
        alike.setdefault(nfc(label.strip().casefold()), []).append(label)
    clashes = [group for group in alike.values() if len(group) > 1]
    if clashes:
        shown = "; ".join(" vs ".join(repr(label) for label in group) for group in clashes[:5])
        return [
            f"config key '{key}.label': label values that differ only by case or surrounding spaces would become "
            f"separate classes ({shown}); write each class one way in the file"
        ]
    shown = ", ".join(sorted(labels)[:10]) + (", ..." if len(labels) > 10 else "")
    if classes:
        if len({nfc(c) for c in classes}) < len(classes):
            return [
                f"config key '{key}.classes': {classes} spells one class twice (composed and decomposed accents read "
                f"the same); list each class once"
            ]
        if task == "bc" and len(classes) != 2:
            return [f"config key '{key}.classes': a bc dataset has 2 classes (negative first), not {len(classes)}"]
        extra = sorted(labels - {nfc(c) for c in classes})
        return [f"config key '{key}.classes': label(s) {extra[:5]} of the data are not listed"] if extra else []
    if task == "bc" and len(labels) != 2:
        return [
            f"config key '{key}.label': a bc dataset needs exactly 2 distinct labels, the data has {len(labels)} "
            f"({shown}); use task: nli / qa for more classes, or fix the label column"
        ]
    if len(labels) < 2:
        return [f"config key '{key}.label': the data has a single label ({shown}); a classifier needs at least 2"]
    return []


def read_user_dataset(files: Mapping[str, Path], declaration: Mapping) -> "pd.DataFrame":
    """The tidy frame of `readers.py` (split, text, label [, question], key): texts and labels in Unicode NFC, texts
    cleaned by the declared tokenizer; a missing test split carved out of train (`split_fractions.test`, `split_seed`)."""
    import pandas as pd
    from sklearn.model_selection import train_test_split

    columns = _columns(declaration)
    clean = TOKENIZERS[declaration["tokenizer"]]
    frames = []
    for role, path in files.items():
        table = read_table(path, file_format(path, declaration.get("format")), list(dict.fromkeys(columns.values())))
        # NFC: a composed and a decomposed spelling of one label or word are one class, one vocabulary entry
        frame = pd.DataFrame({"text": table[columns["text"]].map(nfc).map(clean), "label": table[columns["label"]].map(nfc)})
        if "question" in columns:
            frame["question"] = table[columns["question"]].map(nfc).map(clean)
        frame["split"] = table[columns["split"]].map(SPLIT_ALIASES) if "split" in columns else role
        frame["key"] = [f"{'row' if role == 'all' else role}-{i}" for i in range(len(frame))]
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    frame.loc[frame["split"] == "all", "split"] = "train"
    if "test" not in set(frame["split"]):
        train = frame.index[frame["split"] == "train"].tolist()
        fraction = declaration["split_fractions"]["test"]
        _, test = train_test_split(train, test_size=fraction, random_state=declaration["split_seed"], shuffle=True)
        frame.loc[test, "split"] = "test"
    return frame


def user_spec(name: str, declaration: Mapping) -> DatasetSpec:
    """The registry entry of a validated declaration (the schema has filled every default)."""
    if declaration["task"] not in TASKS:
        raise ValueError(f"{CONFIG_KEY}.{name}.task: {declaration['task']!r} is not one of {TASKS}")
    files = declared_files(declaration)
    frozen = json.loads(json.dumps(dict(declaration)))  # a plain copy the reader closes over
    return DatasetSpec(
        name=name,
        task=declaration["task"],
        read=lambda f: read_user_dataset(f, frozen),
        description=declaration.get("description") or f"user dataset from {', '.join(files.values())}",
        files=files,
        min_df=declaration["min_df"],
        dev_fraction=declaration["split_fractions"]["dev"],
        split_seed=declaration["split_seed"],
        length_bounds=tuple(declaration["length_bounds"]),
        epochs=declaration["epochs"],
        batch_size=declaration["batch_size"],
        embedding_dim=declaration["embedding_dim"],
        hidden_size=declaration["hidden_size"],
        classes=tuple(nfc(c) for c in declaration["classes"]) if declaration.get("classes") else None,
        embeddings=declaration["embeddings"],
        comparable=False,
        note="a user dataset: no paper reports numbers for it",
        tokenizer=declaration["tokenizer"],
    )


def user_specs(declarations: Mapping[str, Mapping]) -> dict[str, DatasetSpec]:
    """Name -> registry entry of each validated declaration (a built-in name is left out: validation refuses it)."""
    return {name: user_spec(name, declaration) for name, declaration in declarations.items() if name not in BUILTIN}
