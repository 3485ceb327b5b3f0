"""Datasets declared in the config (`user_datasets.<name>`): a CSV, TSV or JSONL file (or one per split) with a
text column, a label column and, for NLI/QA, a second text column. No Python needed.

`declaration_problems` checks a declaration against its files before any job runs (reading only the header,
the label column and the split column); `user_spec` turns a validated declaration into a `DatasetSpec`, and
`register_user_datasets` adds those specs to the registry so every stage treats them like built-in datasets.
Relative paths are taken from the working directory (where Snakemake runs), as for `data.user_files`.
"""

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from attnexp.datasets.registry import DATASETS, TASKS, DatasetSpec
from attnexp.datasets.tokenize import TOKENIZERS

if TYPE_CHECKING:  # pandas and scikit-learn load on first use: the Snakefile imports this module at parse time
    import pandas as pd

CONFIG_KEY = "user_datasets"
FORMATS = {"csv": ",", "tsv": "\t", "jsonl": None}
SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
COMPRESSION = (".gz", ".bz2", ".xz", ".zip", ".zst")
SPLIT_ALIASES = {"train": "train", "dev": "dev", "test": "test", "validation": "dev", "valid": "dev", "val": "dev"}
BUILTIN = frozenset(DATASETS)  # the registry before any config adds to it
_registered: set[str] = set()


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


def read_header(path: str | Path, fmt: str) -> list[str]:
    """Column names from the first line only (JSONL: the keys of the first record)."""
    import pandas as pd

    if fmt == "jsonl":
        with pd.read_json(path, lines=True, chunksize=1, dtype=False) as reader:
            first = next(iter(reader), None)
        return [] if first is None else [str(c) for c in first.columns]
    return [str(c) for c in pd.read_csv(path, sep=FORMATS[fmt], nrows=0).columns]


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
    labels, splits = set(), set()
    for role, path in declared_files(declaration).items():
        where = f"config key '{key}." + ("path'" if role == "all" else f"files.{role}'")
        if not Path(path).is_file():
            problems.append(f"{where}: file {path} does not exist (relative paths start at the working directory)")
            continue
        try:
            fmt = file_format(path, declaration.get("format"))
            header = read_header(path, fmt)
        except ValueError as err:
            problems.append(f"{where}: {err}")
            continue
        columns = _columns(declaration)
        absent = [f"{column!r} ({what})" for what, column in columns.items() if column not in header]
        if absent:
            problems.append(f"{where}: column(s) {', '.join(absent)} not in {path}; its columns are: {', '.join(header)}")
            continue
        used = [columns["label"]] + ([columns["split"]] if "split" in columns else [])
        values = read_table(path, fmt, used)
        if (values[columns["label"]] == "").any():
            row = int((values[columns["label"]] == "").to_numpy().argmax())
            problems.append(f"{where}: {path} has an empty {columns['label']!r} (label) in data row {row + 1}")
        labels |= set(values[columns["label"]]) - {""}
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


def _label_problems(key: str, task: str, labels: set[str], classes: list[str] | None) -> list[str]:
    if not labels:
        return []
    shown = ", ".join(sorted(labels)[:10]) + (", ..." if len(labels) > 10 else "")
    if classes:
        if task == "bc" and len(classes) != 2:
            return [f"config key '{key}.classes': a bc dataset has 2 classes (negative first), not {len(classes)}"]
        extra = sorted(labels - set(classes))
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
    """The tidy frame of `readers.py` (split, text, label [, question], key): texts cleaned by the declared
    tokenizer; a missing test split carved out of train (`split_fractions.test`, `split_seed`)."""
    import pandas as pd
    from sklearn.model_selection import train_test_split

    columns = _columns(declaration)
    clean = TOKENIZERS[declaration["tokenizer"]]
    frames = []
    for role, path in files.items():
        table = read_table(path, file_format(path, declaration.get("format")), list(dict.fromkeys(columns.values())))
        frame = pd.DataFrame({"text": table[columns["text"]].map(clean), "label": table[columns["label"]]})
        if "question" in columns:
            frame["question"] = table[columns["question"]].map(clean)
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
        classes=tuple(declaration["classes"]) if declaration.get("classes") else None,
        embeddings=declaration["embeddings"],
        comparable=False,
        note="a user dataset: no paper reports numbers for it",
        tokenizer=declaration["tokenizer"],
    )


def register_user_datasets(declarations: Mapping[str, Mapping]) -> list[str]:
    """Replace the registry's user entries by `declarations` (built-in names are left alone); return the names."""
    for name in _registered:
        DATASETS.pop(name, None)
    _registered.clear()
    for name, declaration in declarations.items():
        if name in BUILTIN:
            continue
        DATASETS[name] = user_spec(name, declaration)
        _registered.add(name)
    return sorted(_registered)
