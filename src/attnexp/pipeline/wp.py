"""Wiegreffe & Pinter (2019) runs: the uniform baseline, extra seeds, the diagnostic MLP with guide weights and
the model-consistent adversary, each a run with the same stored outputs (wp/{dataset}/{variant}/seed{seed}[/lambda{lam}]/),
and the per-dataset analyses over them (seed variance, JSD/TVD points). Tables and figures: attnexp.report.wp."""

from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import pandas as pd

from attnexp.analyses.jw.instances import adversary_table
from attnexp.analyses.jw.settings import AnalysisSettings
from attnexp.analyses.wp.consistent_adversary import (
    AdversaryObjective,
    train_consistent_adversary,
)
from attnexp.analyses.wp.donors import GuidedClassifier, donor_outputs, read_donor
from attnexp.analyses.wp.runs import OUTPUT_SPLITS, Files, aggregate, divergences_from_base, jsd_tvd_points, variance_table
from attnexp.analyses.wp.settings import ADVERSARY_VARIANT, VARIANTS, WPSettings
from attnexp.data.preprocess import read_preprocessed, split_frame
from attnexp.io import read_json, read_parquet, write_json, write_parquet
from attnexp.models.checkpoint import load_model, write_run
from attnexp.models.device import set_threads
from attnexp.models.encoders import set_padded_lstm
from attnexp.models.train import (
    Classification,
    TrainSettings,
    fit,
    model_from_options,
    word_vectors,
)


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
    dataset: str,
    variant: str,
    train: TrainSettings,
    hyperparameters: dict,
    settings: WPSettings,
    model_options: dict,
    meta: dict,
    embeddings: tuple[str, bool | None] = ("random", None),
) -> dict:
    """The run config; `embeddings` = (source, comparable) from `models.train.word_vectors`."""
    source, comparable = embeddings
    encoder, attention = VARIANTS.get(variant, VARIANTS["base"])
    return {
        "dataset": dataset,
        "variant": variant,
        "encoder": encoder,
        "attention": attention,
        "seed": train.seed,
        "hyperparameters": hyperparameters,
        "model_selection": {"split": settings.select_on, "first_epoch_eligible": True},
        "model": model_options,
        "seeding": {"deterministic": train.deterministic},
        "preprocessing": meta["options"],
        "embeddings": source,
        "comparable": bool(meta["comparable"]) if comparable is None else comparable,
        "wp": settings.run_options(),
    }


def run_wp_model(
    *,
    instances: str | PathLike,
    meta: str | PathLike,
    dataset: str,
    variant: str,
    settings: WPSettings,
    train: TrainSettings,
    hyperparameters: dict,
    model_options: dict,
    outputs: dict,
    guide_files: Files | None = None,
    embeddings: dict | None = None,
    threads: int = 1,
) -> dict:
    """Train one W&P classifier run (base, uniform or a diagnostic MLP) and store its donor outputs.

    `train`: `TrainSettings.from_config(config, seed=..., hyperparameters=..., paper="wp")` (its seed is the run's).
    `guide_files`: the donor run's `{split}_attention` files, for the guided variants (mlp_base, mlp_adv).
    `embeddings`: the dataset's word vectors as J&W training gets them (`policy.embeddings`); every variant,
    the diagnostic MLPs included, starts from them."""
    set_threads(threads)
    if variant not in VARIANTS:
        raise ValueError(f"unknown W&P variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    instances, meta = read_preprocessed(instances, meta)
    if meta["task"] != "bc":
        raise ValueError(
            f"W&P runs are binary classification only; {dataset!r} is a {meta['task']} dataset: remove it from wp.datasets"
        )
    encoder, attention, seed = *VARIANTS[variant], train.seed
    source, vectors, comparable = word_vectors(embeddings, meta, hyperparameters["embedding_dim"], seed)
    run_config = _run_config(dataset, variant, train, hyperparameters, settings, model_options, meta, (source, comparable))
    model = model_from_options(
        meta, encoder, "uniform" if attention == "guide" else attention, hyperparameters, model_options, seed, vectors
    )
    if attention == "guide":
        if not guide_files or "test_attention" not in guide_files:
            raise ValueError(f"variant {variant!r} needs guide files (the donor run's stored attention)")
        guides = read_donor(guide_files, instances, settings.preloaded_alignment, f"guide of {variant}")
        model = GuidedClassifier(model.config, guides, vectors)
        run_config["guide"] = str(Path(guide_files["test_attention"]).parent)
    print(f"W&P {variant} on {dataset}, seed {seed}: {sum(p.numel() for p in model.parameters())} parameters")
    result = fit(model, instances, train, Classification(first_epoch_eligible=True))
    return _write_run(model, result, instances, run_config, outputs)


def run_wp_adversary(
    *,
    instances: str | PathLike,
    meta: str | PathLike,
    dataset: str,
    lam: float,
    settings: WPSettings,
    train: TrainSettings,
    hyperparameters: dict,
    model_options: dict,
    base_files: Files,
    outputs: dict,
    embeddings: dict | None = None,
    threads: int = 1,
) -> dict:
    """Train the model-consistent adversary against the base run for one lambda (W&P §4); `train` and
    `embeddings` as for `run_wp_model` (the adversary starts from the base model's initialisation)."""
    set_threads(threads)
    instances, meta = read_preprocessed(instances, meta)
    base = read_donor(base_files, instances, settings.preloaded_alignment, "base run", with_p=True)
    objective = AdversaryObjective(
        lam=lam,
        tvd_binary=settings.tvd_binary,
        class_weight_scaling=settings.adv_loss_class_weight_scaling,
        max_epochs=settings.adversary.max_epochs,
        patience=settings.adversary.patience,
    )
    seed = train.seed
    source, vectors, comparable = word_vectors(embeddings, meta, hyperparameters["embedding_dim"], seed)
    run_config = _run_config(
        dataset, ADVERSARY_VARIANT, train, hyperparameters, settings, model_options, meta, (source, comparable)
    )
    run_config.update({"lambda": lam, "objective": {"max_epochs": objective.max_epochs, "patience": objective.patience}})
    model = model_from_options(meta, *VARIANTS["base"], hyperparameters, model_options, seed, vectors)
    print(f"W&P adversary on {dataset}, seed {seed}, lambda {lam}")
    result = train_consistent_adversary(model, instances, base, train, objective)
    _write_run(model, result, instances, run_config, outputs)
    tvd, divergence = divergences_from_base(base_files, outputs, settings.tvd_binary)
    metrics = {
        **read_json(outputs["metrics"]),
        "mean_tvd": aggregate(tvd, settings.report_aggregation),
        "mean_jsd": aggregate(divergence, settings.report_aggregation),
        "aggregation": settings.report_aggregation,
    }
    write_json(outputs["metrics"], metrics)
    return metrics


def run_seed_variance(
    *, base_files: Files, seed_files: Sequence[Files], settings: WPSettings, output: str | PathLike
) -> pd.DataFrame:
    """seed_variance.parquet for one dataset: every extra seed against the base seed, per test instance."""
    runs = [(read_parquet(f["test_predictions"]), read_parquet(f["test_attention"])) for f in seed_files]
    return variance_table(base_files, runs, output, settings.seed_plot_variant)


def run_adversary_variance(
    *, base_files: Files, jw_adversary: str | PathLike, settings: WPSettings, output: str | PathLike
) -> pd.DataFrame:
    """adv_variance.parquet: the J&W per-instance adversary runs (epsilon-max picks) against the base."""
    frame = read_parquet(jw_adversary)
    runs = [
        (
            pd.DataFrame({"instance_id": part["instance_id"], "p": [o[1] for o in part["adversarial_output"]]}),
            part[["instance_id"]].assign(attention=part["adversarial_attention"]),
        )
        for _, part in frame.groupby("run", sort=True)
    ]
    return variance_table(base_files, runs, output, settings.seed_plot_variant)


def run_jw_adversary(
    *,
    model: str | PathLike,
    instances: str | PathLike,
    settings: WPSettings,
    analysis: AnalysisSettings,
    seed: int,
    output: str | PathLike,
    threads: int = 1,
) -> pd.DataFrame:
    """J&W's per-instance adversary (jain-wallace §6.5) on the W&P base model's test set, `wp.jw_adversary_runs`
    times with different starts; the analyses contract's adversary.parquet columns plus `run`."""
    set_threads(threads)
    classifier = set_padded_lstm(load_model(model, analysis.device), analysis.padded_lstm)
    test = split_frame(read_parquet(instances), "test")
    parts = []
    for run in range(settings.jw_adversary_runs):
        print(f"J&W adversary run {run + 1}/{settings.jw_adversary_runs}")
        table = adversary_table(classifier, test, analysis, seed + 1 + run)
        parts.append(table.assign(run=run))
    frame = pd.concat(parts, ignore_index=True)
    write_parquet(output, frame)
    return frame


def run_jsd_tvd_points(
    *,
    dataset: str,
    settings: WPSettings,
    base_files: Files,
    seed_files: Sequence[Files],
    uniform_files: Files,
    adversary_files: Sequence[Files],
    jw_adversary: str | PathLike | None,
    output: str | PathLike,
) -> pd.DataFrame:
    """jsd_tvd_points.parquet for one dataset; `adversary_files` in the order of `settings.lambdas_for(dataset)`."""
    points = jsd_tvd_points(
        dataset,
        base_files,
        seed_files,
        uniform_files,
        adversary_files,
        settings.lambdas_for(dataset),
        settings.tvd_binary,
        settings.report_aggregation,
        jw_adversary,
    )
    write_parquet(output, points)
    print(f"{len(points)} points for {dataset}")
    return points
