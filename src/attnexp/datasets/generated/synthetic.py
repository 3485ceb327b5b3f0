"""Embedded offline datasets, generated deterministically from a seed in the real datasets' raw formats.

`generate` writes three families (FAMILY_FILES; the workflow's `synthesize` rule), each into one folder by one
call, five datasets in all:
- `sentiment`: planted-rationale binary classification in J&W's CSV format (syn_sentiment; generated/planted.py);
- `nli`: planted-rationale sentence pairs, 3 classes, in the SNLI TSV format (syn_nli; generated/planted.py);
- `babi`: bAbI tasks 1-3 from a small world simulation, in the official archive's layout (syn_babi1..3;
  generated/babi.py).
The fourth generated family, `agreement` (A&Z's syn_agreement), is not written here: generated/agreement.py
writes it (the `synthesize_agreement` rule, seed and options from config `az.agreement`).
"""

from pathlib import Path

from attnexp.datasets.babi_format import BABI_TASK_FILES

FAMILY_FILES = {  # family -> the files it writes, relative to its folder (the registry's `synthetic` layouts)
    "sentiment": ("data.csv",),
    "nli": tuple(f"snli_1.0_{split}.tsv" for split in ("train", "dev", "test")),
    "babi": tuple(f"en/{stem}_{split}.txt" for stem in BABI_TASK_FILES.values() for split in ("train", "test")),
}


def generate(family: str, out_dir: str | Path, seed: int, options: dict) -> list[Path]:
    """Write one family's raw files (FAMILY_FILES) into `out_dir`, from config `synthetic.seed` and `synthetic.<family>`."""
    # imported here: the workflow reads FAMILY_FILES at parse time, which must not load numpy or pandas
    from attnexp.datasets.generated.babi import write_babi
    from attnexp.datasets.generated.planted import write_planted_nli, write_planted_sentiment

    out_dir = Path(out_dir)
    if family == "sentiment":
        written = [write_planted_sentiment(out_dir / "data.csv", seed=seed, **options)]
    elif family == "nli":
        written = write_planted_nli(out_dir, seed=seed, **options)
    elif family == "babi":
        statements = {int(k.removeprefix("qa")): v for k, v in options["statements"].items()}
        written = write_babi(out_dir, seed, options["n_train"], options["n_test"], statements, options["questions_per_story"])
    else:
        raise ValueError(f"unknown synthetic family {family!r}; choose one of {', '.join(FAMILY_FILES)}")
    missing = sorted(set(FAMILY_FILES[family]) - {p.relative_to(out_dir).as_posix() for p in written})
    if missing:
        raise RuntimeError(f"generator for {family!r} did not write {missing} under {out_dir}")
    for path in written:
        print(f"wrote {path}")
    return written
