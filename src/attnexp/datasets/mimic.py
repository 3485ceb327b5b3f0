"""MIMIC-III Diabetes and Anemia (Johnson et al. 2016) from user-supplied PhysioNet files (§3.3).

`NOTEEVENTS.csv` gives one document per admission (its discharge summaries concatenated) and
`DIAGNOSES_ICD.csv` the labels; Diabetes uses the CAML top-50 split ids `{train,dev,test}_50_hadm_ids.csv`.
"""

from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

from attnexp.datasets.tokenize import clean


def dotted_icd9(code: str) -> str:
    """CAML's dotted diagnosis codes: `25000` -> `250.00`, `E8790` -> `E879.0`."""
    code = str(code).strip()
    cut = 4 if code.startswith("E") else 3
    return f"{code[:cut]}.{code[cut:]}" if len(code) > cut else code


def admission_documents(notes_path: Path) -> pd.Series:
    """Cleaned discharge-summary text per HADM_ID (reports of an admission concatenated in file order)."""
    notes = pd.read_csv(
        notes_path,
        usecols=["HADM_ID", "CATEGORY", "TEXT"],
        dtype={"HADM_ID": "Int64"},
        keep_default_na=False,
        na_values={"HADM_ID": [""]},
    )
    notes = notes[(notes["CATEGORY"] == "Discharge summary") & notes["HADM_ID"].notna()]
    text = notes.groupby("HADM_ID", sort=False)["TEXT"].agg(" ".join)
    return text.map(lambda t: clean(t, mimic=True))


def admission_codes(diagnoses_path: Path) -> pd.Series:
    codes = pd.read_csv(diagnoses_path, usecols=["HADM_ID", "ICD9_CODE"], dtype=str, keep_default_na=False)
    codes = codes[codes["ICD9_CODE"] != ""]
    return (
        codes.assign(HADM_ID=codes["HADM_ID"].astype(int), code=codes["ICD9_CODE"].map(dotted_icd9))
        .groupby("HADM_ID")["code"]
        .agg(set)
    )


def read_split_ids(path: Path) -> list[int]:
    return [int(line.split(",")[0]) for line in path.read_text().split() if line.strip() and line.split(",")[0].isdigit()]


def read_diabetes(files: dict[str, Path]) -> pd.DataFrame:
    """Label 1 iff any ICD-9 code of the admission starts with 250.00; CAML train/dev/test admissions."""
    docs, codes = admission_documents(files["notes"]), admission_codes(files["diagnoses"])
    rows = []
    for split in ("train", "dev", "test"):
        for hadm in read_split_ids(files[f"{split}_ids"]):
            if hadm in docs.index:
                label = int(any(c.startswith("250.00") for c in codes.get(hadm, set())))
                rows.append((split, docs[hadm], label, f"{split}-{hadm}"))
    return pd.DataFrame(rows, columns=["split", "text", "label", "key"])


def anemia_label(codes: set[str]) -> int | None:
    """1: has 285.1 and no 285.2x; 0: has 285.2x and no 285.1; None otherwise."""
    acute = "285.1" in codes
    chronic = any(c.startswith("285.2") for c in codes)
    return 1 if acute and not chronic else 0 if chronic and not acute else None


def read_anemia(files: dict[str, Path], test_seed: int = 12939, dev_seed: int = 13448) -> pd.DataFrame:
    """Admissions with exactly one of the two anemia types; stratified 20% test, then 15% of the rest -> dev."""
    docs, codes = admission_documents(files["notes"]), admission_codes(files["diagnoses"])
    labels = {h: anemia_label(codes.get(h, set())) for h in docs.index}
    frame = pd.DataFrame(
        [(docs[h], lab, f"{h}") for h, lab in labels.items() if lab is not None], columns=["text", "label", "key"]
    )
    rest, test = train_test_split(frame, test_size=0.2, random_state=test_seed, stratify=frame["label"])
    train, dev = train_test_split(rest, test_size=0.15, random_state=dev_seed)
    return pd.concat([train.assign(split="train"), dev.assign(split="dev"), test.assign(split="test")], ignore_index=True)
