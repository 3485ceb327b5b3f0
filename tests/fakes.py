"""Small synthetic analysis outputs that follow the analyses contract exactly (docs/jain-wallace.md, the analyses table)."""

from pathlib import Path

import numpy as np
import pandas as pd

from attnexp.io import write_csv, write_json, write_parquet

PAIRS = ("attn_grad", "attn_loo", "grad_loo", "attn_ig", "ig_loo", "grad_ig")
MEASURES = ("attention", "gradient", "loo", "ig")


def fake_meta(dataset: str, task: str, classes: list[str], rng: np.random.Generator) -> dict:
    counts = {split: {str(i): int(rng.integers(5, 50)) for i in range(len(classes))} for split in ("train", "dev", "test")}
    return {
        "dataset": dataset,
        "task": task,
        "classes": classes,
        "vocab": ["<0>", "<UNK>", "<SOS>", "<EOS>", *[f"w{i}" for i in range(60)]],
        "sizes": {split: sum(c.values()) for split, c in counts.items()},
        "class_counts": counts,
        "mean_length": float(rng.uniform(5, 30)),
        "comparable": False,
    }


def fake_instances(n: int, n_classes: int, rng: np.random.Generator, max_len: int = 25) -> pd.DataFrame:
    lengths = np.sort(rng.integers(1, max_len, n))
    return pd.DataFrame(
        {
            "instance_id": [f"test-{i}" for i in range(n)],
            "split": "test",
            "tokens": [[2, *rng.integers(4, 64, k).tolist(), 3] for k in lengths],
            "label": rng.integers(0, n_classes, n),
            "length": lengths,
        }
    )


def fake_analyses(instances: pd.DataFrame, n_classes: int, rng: np.random.Generator) -> dict[str, pd.DataFrame]:
    """importance, kendall, permutation, adversary tables for one model."""
    n = len(instances)
    base = instances[["instance_id", "length", "label"]].copy()
    base["predicted"] = np.where(rng.random(n) < 0.8, base["label"], rng.integers(0, n_classes, n))
    attention = [rng.dirichlet(np.full(k, 0.3)) for k in base["length"]]
    base["max_attention"] = [float(a.max()) for a in attention]
    importance = base.assign(
        attention=attention,
        **{m: [rng.random(k).tolist() for k in base["length"]] for m in MEASURES[1:]},
        rationale=[sorted(rng.choice(k, min(k, 2), replace=False).tolist()) for k in base["length"]],
    )
    importance["attention"] = [a.tolist() for a in attention]
    rows = []
    for pair in PAIRS:
        for record in base.itertuples(index=False):
            undefined = record.length < 2 or rng.random() < 0.05
            tau = np.nan if undefined else float(np.clip(rng.normal(0.3, 0.3), -1, 1))
            p = np.nan if undefined else float(rng.uniform(0, 0.2))
            rows.append((record.instance_id, record.predicted, pair, tau, p, "exact", undefined))
    kendall = pd.DataFrame(rows, columns=["instance_id", "predicted", "pair", "tau", "p_value", "method", "is_nan"])
    changes = [np.abs(rng.normal(0, 0.1 * m, 100)).tolist() for m in base["max_attention"]]
    permutation = base.assign(median_output_change=[float(np.median(c)) for c in changes], output_changes=changes)
    original = [rng.dirichlet(np.ones(n_classes)).tolist() for _ in range(n)]
    adversary = base.assign(
        emax_jsd=rng.uniform(0, 0.69, n),
        emax_tvd=rng.uniform(0, 0.01, n),
        adversarial_attention=[rng.dirichlet(np.full(k, 0.3)).tolist() for k in base["length"]],
        adversarial_output=original,
        original_output=original,
        candidate_jsd=[rng.uniform(0, 0.69, 5).tolist() for _ in range(n)],
        candidate_tvd=[rng.uniform(0, 0.01, 5).tolist() for _ in range(n)],
    )
    erasure_attention, erasure_input = fake_erasure(base)
    return {
        "importance": importance,
        "kendall": kendall,
        "permutation": permutation,
        "adversary": adversary,
        "erasure_attention": erasure_attention,
        "erasure_input": erasure_input,
    }


def fake_erasure(base: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """erasure_attention and erasure_input tables (attnexp.analyses.erasure) for the instances of `base`, from a
    generator of their own (the other fakes' draws stay as they were)."""
    rng = np.random.default_rng(int(base["length"].sum()))
    rankings = ["attention", "gradient", "loo", "ig", "random", "attention_gradient", "attention_x_gradient"]
    rows = [(i, r, int(n)) for i, n in zip(base["instance_id"], base["length"], strict=True) for r in rankings]
    attention = pd.DataFrame(rows, columns=["instance_id", "ranking", "n"])
    flips = rng.uniform(0, 1, len(attention))
    attention["first_flip_fraction"] = np.where((rng.random(len(attention)) < 0.3) | (attention["n"] < 2), np.nan, flips)
    single = (attention["ranking"] == "attention") & (attention["n"] >= 2)
    for column in ("jsd_top", "jsd_random"):
        attention[column] = np.where(single, rng.uniform(0, 0.3, len(attention)), np.nan)
    for column in ("flip_top", "flip_random"):
        attention[column] = pd.array(np.where(single, rng.random(len(attention)) < 0.2, False), dtype="boolean")
        attention.loc[~single, column] = pd.NA
    bins = (0.01, 0.05, 0.1, 0.2, 0.5)
    rows = [(i, r, k) for i in base["instance_id"] for r in rankings[:5] for k in bins]
    inputs = pd.DataFrame(rows, columns=["instance_id", "ranking", "k"])
    inputs["comprehensiveness"] = rng.uniform(-0.1, 0.6, len(inputs))
    inputs["sufficiency"] = rng.uniform(-0.1, 0.6, len(inputs))
    return attention, inputs


def write_fake_model(
    root: Path,
    dataset: str,
    encoder: str,
    attention: str,
    seed: int,
    meta: dict,
    instances: pd.DataFrame,
    rng: np.random.Generator,
) -> Path:
    folder = root / "results" / "analyses" / dataset / f"{encoder}-{attention}" / f"seed{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in fake_analyses(instances, len(meta["classes"]), rng).items():
        write_parquet(folder / f"{name}.parquet", frame)
    recovery = pd.DataFrame(
        [
            {
                "dataset": dataset,
                "encoder": encoder,
                "attention": attention,
                "seed": seed,
                "measure": m,
                "precision_at_k": rng.random(),
                "auc": rng.random(),
                "n": len(instances),
            }
            for m in MEASURES
        ]
    )
    write_csv(folder / "rationale_recovery.csv", recovery)
    model = root / "results" / "models" / dataset / f"{encoder}-{attention}" / f"seed{seed}"
    model.mkdir(parents=True, exist_ok=True)
    metric = {
        "dataset": dataset,
        "encoder": encoder,
        "attention": attention,
        "seed": seed,
        "accuracy": float(rng.random()),
        "f1_positive": float(rng.random()),
        "f1_macro": float(rng.random()),
    }
    write_json(model / "metrics.json", metric)
    return folder


def write_fake_dataset(
    root: Path, dataset: str, task: str, classes: list[str], rng: np.random.Generator, n: int = 40
) -> tuple[dict, pd.DataFrame]:
    folder = root / "results" / "preprocessed" / dataset
    folder.mkdir(parents=True, exist_ok=True)
    meta = fake_meta(dataset, task, classes, rng)
    instances = fake_instances(n, len(classes), rng)
    write_json(folder / "meta.json", meta)
    write_parquet(folder / "instances.parquet", instances)
    return meta, instances
