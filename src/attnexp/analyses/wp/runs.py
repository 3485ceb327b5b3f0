"""Wiegreffe & Pinter (2019) runs and tables: the uniform baseline, extra seeds, the diagnostic MLP with
guide weights and the model-consistent adversary, each a run with the same stored outputs
(wp/{dataset}/{variant}/seed{seed}[/lambda{lam}]/)."""

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.wp.consistent_adversary import AdversaryObjective, divergence_to_base, train_consistent_adversary
from attnexp.analyses.wp.donors import GuidedClassifier, donor_outputs, load_donor
from attnexp.analyses.wp.seed_variance import attention_matrix, probabilities, seed_variance
from attnexp.data.preprocess import load_preprocessed, split_frame
from attnexp.io import read_json, write_csv, write_json, write_parquet
from attnexp.models.checkpoint import write_run
from attnexp.models.train import JW_LEARNING_RATE, JW_WEIGHT_DECAY, Classification, TrainSettings, fit, model_from_options

# variant -> (encoder, attention); "guide" = attention frozen to a donor's weights
VARIANTS = {
    "base": ("lstm", "tanh"),
    "uniform": ("lstm", "uniform"),
    "mlp_uniform": ("average", "uniform"),
    "mlp_trained": ("average", "tanh"),
    "mlp_base": ("average", "guide"),
    "mlp_adv": ("average", "guide"),
}
GUIDE_NAMES = {"mlp_uniform": "Uniform", "mlp_trained": "Trained MLP", "mlp_base": "Base LSTM", "mlp_adv": "Adversary"}
OUTPUT_SPLITS = ("train", "dev", "test")  # dev too: DEFAULT selection of guided runs needs dev guides


def _settings(hyperparameters: dict, seed: int, wp: dict, deterministic: bool) -> TrainSettings:
    return TrainSettings(
        epochs=hyperparameters["epochs"],
        batch_size=hyperparameters["batch_size"],
        seed=seed,
        select_on=wp["select_on"],
        deterministic=deterministic,
        learning_rate=JW_LEARNING_RATE,
        weight_decay=JW_WEIGHT_DECAY,
    )


def _read_donor(files: dict, instances: pd.DataFrame, alignment: str, name: str, with_p: bool = False):
    """One DonorTable over every split the donor stored (train, dev, test)."""
    attention = pd.concat([pd.read_parquet(files[f"{s}_attention"]) for s in OUTPUT_SPLITS], ignore_index=True)
    predictions = (
        pd.concat([pd.read_parquet(files[f"{s}_predictions"]) for s in OUTPUT_SPLITS], ignore_index=True) if with_p else None
    )
    recipient = [i for s in OUTPUT_SPLITS for i in split_frame(instances, s)["instance_id"]]
    return load_donor(attention, predictions, alignment, recipient, name)


def _write_run(
    model, result, instances: pd.DataFrame, run_config: dict, outputs: dict, extra_metrics: dict | None = None
) -> dict:
    for split in OUTPUT_SPLITS:
        predictions, attention = donor_outputs(model, split_frame(instances, split))
        write_parquet(outputs[f"{split}_predictions"], predictions)
        write_parquet(outputs[f"{split}_attention"], attention)
    metrics = {
        **result.test_metrics,
        **(extra_metrics or {}),
        "best_epoch": result.best_epoch,
        **{k: run_config[k] for k in ("dataset", "variant", "seed", "lambda") if k in run_config},
    }
    write_run(outputs, model, result.history, run_config, metrics)
    print(f"test metrics: {metrics}")
    return metrics


def _run_config(
    dataset: str, variant: str, seed: int, hyperparameters: dict, wp: dict, model_options: dict, deterministic: bool, meta: dict
) -> dict:
    encoder, attention = VARIANTS.get(variant, VARIANTS["base"])
    return {
        "dataset": dataset,
        "variant": variant,
        "encoder": encoder,
        "attention": attention,
        "seed": seed,
        "hyperparameters": hyperparameters,
        "model_selection": {"split": wp["select_on"], "first_epoch_eligible": True},
        "model": model_options,
        "seeding": {"deterministic": deterministic},
        "preprocessing": meta["options"],
        "embeddings": "random",
        "comparable": meta["comparable"],
        "wp": {k: v for k, v in wp.items() if k not in ("datasets", "seeds", "lambdas", "diag_adv_lambda")},
    }


def run_wp_model(
    instances_dir,
    dataset: str,
    variant: str,
    seed: int,
    hyperparameters: dict,
    wp: dict,
    model_options: dict,
    deterministic: bool,
    outputs: dict,
    guide_files: dict | None = None,
    threads: int = 1,
) -> dict:
    """Train one W&P classifier run (base, uniform or a diagnostic MLP) and store its donor outputs."""
    torch.set_num_threads(threads)
    if variant not in VARIANTS:
        raise ValueError(f"unknown W&P variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    instances, meta = load_preprocessed(instances_dir)
    if meta["task"] != "bc":
        raise ValueError(
            f"W&P runs are binary classification only; {dataset!r} is a {meta['task']} dataset: remove it from wp.datasets"
        )
    encoder, attention = VARIANTS[variant]
    run_config = _run_config(dataset, variant, seed, hyperparameters, wp, model_options, deterministic, meta)
    model = model_from_options(
        meta, encoder, "uniform" if attention == "guide" else attention, hyperparameters, model_options, seed
    )
    if attention == "guide":
        if not guide_files:
            raise ValueError(f"variant {variant!r} needs guide files (the donor run's stored attention)")
        guides = _read_donor(guide_files, instances, wp["preloaded_alignment"], f"guide of {variant}")
        model = GuidedClassifier(model.config, guides)
        run_config["guide"] = str(Path(guide_files["test_attention"]).parent)
    print(f"W&P {variant} on {dataset}, seed {seed}: {sum(p.numel() for p in model.parameters())} parameters")
    result = fit(model, instances, _settings(hyperparameters, seed, wp, deterministic), Classification(first_epoch_eligible=True))
    return _write_run(model, result, instances, run_config, outputs)


def aggregate(values: np.ndarray, aggregation: str) -> float:
    """Mean over instances (DEFAULT) or the authors' stored sum (quirk `wp.report_aggregation: sum`)."""
    return float(np.sum(values) if aggregation == "sum" else np.mean(values))


def divergences_from_base(base_files: dict, run_files: dict, tvd_binary: str) -> tuple[np.ndarray, np.ndarray]:
    """Per test instance (TVD, JSD) between a run and the base, matched by instance id."""
    base_predictions = pd.read_parquet(base_files["test_predictions"])
    ids = list(base_predictions["instance_id"])
    run_predictions, run_attention = pd.read_parquet(run_files["test_predictions"]), pd.read_parquet(run_files["test_attention"])
    base_attention = attention_matrix(pd.read_parquet(base_files["test_attention"]), ids)
    return divergence_to_base(
        probabilities(base_predictions, ids),
        base_attention,
        probabilities(run_predictions, ids),
        attention_matrix(run_attention, ids),
        tvd_binary,
    )


def run_wp_adversary(
    instances_dir,
    dataset: str,
    seed: int,
    lam: float,
    hyperparameters: dict,
    wp: dict,
    model_options: dict,
    deterministic: bool,
    base_files: dict,
    outputs: dict,
    threads: int = 1,
) -> dict:
    """Train the model-consistent adversary against the base run for one lambda (W&P §4)."""
    torch.set_num_threads(threads)
    instances, meta = load_preprocessed(instances_dir)
    base = _read_donor(base_files, instances, wp["preloaded_alignment"], "base run", with_p=True)
    objective = AdversaryObjective(
        lam=lam,
        tvd_binary=wp["tvd_binary"],
        class_weight_scaling=wp["adv_loss_class_weight_scaling"],
        max_epochs=wp["adversary"]["max_epochs"],
        patience=wp["adversary"]["patience"],
    )
    run_config = _run_config(dataset, "adversarial", seed, hyperparameters, wp, model_options, deterministic, meta)
    run_config.update({"lambda": lam, "objective": {"max_epochs": objective.max_epochs, "patience": objective.patience}})
    model = model_from_options(meta, *VARIANTS["base"], hyperparameters, model_options, seed)
    print(f"W&P adversary on {dataset}, seed {seed}, lambda {lam}")
    result = train_consistent_adversary(model, instances, base, _settings(hyperparameters, seed, wp, deterministic), objective)
    _write_run(model, result, instances, run_config, outputs)
    tvd, divergence = divergences_from_base(base_files, outputs, wp["tvd_binary"])
    metrics = {
        **read_json(outputs["metrics"]),
        "mean_tvd": aggregate(tvd, wp["report_aggregation"]),
        "mean_jsd": aggregate(divergence, wp["report_aggregation"]),
        "aggregation": wp["report_aggregation"],
    }
    write_json(outputs["metrics"], metrics)
    return metrics


def _variance(base_files: dict, comparisons: list[tuple[pd.DataFrame, pd.DataFrame]], output, variant: str) -> pd.DataFrame:
    base_predictions = pd.read_parquet(base_files["test_predictions"])
    ids = list(base_predictions["instance_id"])
    other_p = np.stack([probabilities(predictions, ids) for predictions, _ in comparisons])
    matrices = [attention_matrix(pd.read_parquet(base_files["test_attention"]), ids)]
    matrices += [attention_matrix(attention, ids) for _, attention in comparisons]
    width = max(m.shape[1] for m in matrices)
    matrices = [np.pad(m, ((0, 0), (0, width - m.shape[1]))) for m in matrices]
    frame = seed_variance(probabilities(base_predictions, ids), matrices[0], other_p, np.stack(matrices[1:]), variant)
    frame.insert(0, "instance_id", ids)
    write_parquet(output, frame)
    print(f"{len(comparisons)} comparison run(s), {len(ids)} test instances: median attn_diff {frame.attn_diff.median():.4f}")
    return frame


def run_seed_variance(base_files: dict, seed_files: list[dict], output, variant: str = "script") -> pd.DataFrame:
    """seed_variance.parquet for one dataset: every extra seed against the base seed, per test instance."""
    runs = [(pd.read_parquet(f["test_predictions"]), pd.read_parquet(f["test_attention"])) for f in seed_files]
    return _variance(base_files, runs, output, variant)


def run_adversary_variance(base_files: dict, jw_adversary, output, variant: str = "script") -> pd.DataFrame:
    """adv_variance.parquet: the J&W per-instance adversary runs (epsilon-max picks) against the base."""
    frame = pd.read_parquet(jw_adversary)
    runs = [
        (
            pd.DataFrame({"instance_id": part["instance_id"], "p": [o[1] for o in part["adversarial_output"]]}),
            part[["instance_id"]].assign(attention=part["adversarial_attention"]),
        )
        for _, part in frame.groupby("run", sort=True)
    ]
    return _variance(base_files, runs, output, variant)


def run_jw_adversary(
    model_path, instances_dir, analyses: dict, batch_size: int, runs: int, seed: int, output, threads: int = 1
) -> pd.DataFrame:
    """J&W's per-instance adversary (jain-wallace §6.5) on the W&P base model's test set, `runs` times with
    different starts; the analyses contract's adversary.parquet columns plus `run`."""
    from attnexp.analyses.jw.instances import AnalysisSettings, adversary_table
    from attnexp.models.checkpoint import load_model

    torch.set_num_threads(threads)
    model = load_model(model_path)
    instances, _ = load_preprocessed(instances_dir)
    settings = AnalysisSettings.from_config(analyses, batch_size)
    parts = []
    for run in range(runs):
        print(f"J&W adversary run {run + 1}/{runs}")
        table = adversary_table(model, split_frame(instances, "test"), settings, torch.Generator().manual_seed(seed + 1 + run))
        parts.append(table.assign(run=run))
    frame = pd.concat(parts, ignore_index=True)
    write_parquet(output, frame)
    return frame


def _metrics_frame(paths: list) -> pd.DataFrame:
    return pd.DataFrame([read_json(p) for p in paths])


def uniform_table(base_metrics: list, uniform_metrics: list, output, reported=None) -> pd.DataFrame:
    """W&P Table 2: per dataset the J&W reported F1 (user file, optional), our base model and the uniform model."""
    base, uniform = _metrics_frame(base_metrics), _metrics_frame(uniform_metrics)
    columns = ["f1_positive", "accuracy", "f1_macro", "roc_auc"]
    table = base[["dataset", *columns]].merge(uniform[["dataset", *columns]], on="dataset", suffixes=("_reproduced", "_uniform"))
    reported_f1 = pd.read_csv(reported).set_index("dataset")["f1"] if reported else pd.Series(dtype=float)
    table.insert(1, "jw_reported_f1", table["dataset"].map(reported_f1))
    write_csv(output, table)
    return table


def diagnostic_table(metrics: list, output) -> pd.DataFrame:
    """W&P Table 4: positive-class F1 per guide (rows) and dataset (columns)."""
    frame = _metrics_frame(metrics)
    frame["guide"] = frame["variant"].map(GUIDE_NAMES)
    table = frame.pivot(index="guide", columns="dataset", values="f1_positive").reindex(list(GUIDE_NAMES.values()))
    table = table.dropna(how="all").reset_index()
    write_csv(output, table)
    return table


def adversarial_table(adversary_metrics: list, base_metrics: list, output) -> pd.DataFrame:
    """Per dataset and lambda: the adversary's F1/accuracy/AUC next to the base F1, mean JSD and TVD to the base."""
    frame = _metrics_frame(adversary_metrics).rename(columns={"f1_positive": "f1", "roc_auc": "auc"})
    base = _metrics_frame(base_metrics).set_index("dataset")["f1_positive"]
    frame["base_f1"] = frame["dataset"].map(base)
    columns = [
        "dataset",
        "lambda",
        "f1",
        "base_f1",
        "accuracy",
        "auc",
        "mean_tvd",
        "mean_jsd",
        "aggregation",
        "n",
        "best_epoch",
        "epochs_run",
    ]
    table = frame[columns].sort_values(["dataset", "lambda"]).reset_index(drop=True)
    write_csv(output, table)
    return table


def jsd_tvd_points(
    dataset: str,
    base_files: dict,
    seed_files: list[dict],
    uniform_files: dict,
    adversary_files: list[dict],
    lambdas: list[float],
    output,
    tvd_binary: str = "full",
    aggregation: str = "mean",
    jw_adversary=None,
) -> pd.DataFrame:
    """Mean test JSD and TVD to the base for every seed, the uniform model and each adversary (W&P Fig. 3)."""
    rows = []
    labelled = [("seed", str(read_json(f["metrics"])["seed"]), f) for f in seed_files]
    labelled += [("uniform", "uniform", uniform_files)]
    labelled += [("adversary", f"{lam:g}", f) for lam, f in zip(lambdas, adversary_files, strict=True)]
    for kind, label, files in labelled:
        tvd, divergence = divergences_from_base(base_files, files, tvd_binary)
        rows.append(
            {
                "dataset": dataset,
                "model": kind,
                "label": label,
                "jsd": aggregate(divergence, aggregation),
                "tvd": aggregate(tvd, aggregation),
                "n": len(tvd),
            }
        )
    if jw_adversary:
        frame = pd.read_parquet(jw_adversary)
        per_run = frame.groupby("run").agg(
            jsd=("emax_jsd", lambda v: aggregate(v, aggregation)), tvd=("emax_tvd", lambda v: aggregate(v, aggregation))
        )
        rows.append(
            {
                "dataset": dataset,
                "model": "jw_adversary",
                "label": "per-instance",
                "jsd": float(per_run["jsd"].mean()),
                "tvd": float(per_run["tvd"].mean()),
                "n": int(len(frame) // len(per_run)),
            }
        )
    table = pd.DataFrame(rows)
    write_csv(output, table)
    return table
