"""Wiegreffe & Pinter (2019) jobs: the runs (uniform baseline, extra seeds, diagnostic MLPs with guide weights,
the model-consistent adversary), each with the same stored outputs (wp/{dataset}/{variant}/seed{seed}[/lambda{lam}]/);
the per-dataset analyses over them (seed and adversary variance, J&W's per-instance adversary, JSD/TVD points); and
the tables and figures (`attnexp.report.wp`). The jobs read and write the files; the analyses compute on what
they read (`attnexp.analyses.wp`: seed_variance, jsd_tvd)."""

from pathlib import Path

from attnexp.analyses.wp.settings import ADVERSARY_VARIANT, VARIANTS, WPSettings
from attnexp.models.settings import FitSettings
from attnexp.pipeline import ByRule, Files
from attnexp.pipeline.settings import FigureSettings, WPAnalysisSettings, WPRunSettings, resolved


def run_wp_train(*, inputs: Files, outputs: Files, settings: WPRunSettings, threads: int = 1) -> dict:
    """Train one W&P classifier run (base, uniform or a diagnostic MLP) and store its donor outputs. The guided
    variants (mlp_base, mlp_adv) read the donor run's `{split}_attention` inputs. Every variant, the diagnostic
    MLPs included, starts from the dataset's word vectors as J&W training gets them."""
    from attnexp.analyses.wp.donors import GuidedClassifier, read_donor
    from attnexp.data.preprocess import read_preprocessed
    from attnexp.models.device import set_threads
    from attnexp.models.train import Classification, fit, model_from_options, word_vectors

    set_threads(threads)
    s, sizes = settings, settings.hyperparameters
    if s.variant not in VARIANTS:
        raise ValueError(f"unknown W&P variant {s.variant!r}; choose one of {', '.join(VARIANTS)}")
    instances, meta = read_preprocessed(inputs["instances"], inputs["meta"])
    if meta["task"] != "bc":
        raise ValueError(
            f"W&P runs are binary classification only; {s.dataset!r} is a {meta['task']} dataset: remove it from wp.datasets"
        )
    encoder, attention = VARIANTS[s.variant]
    source, vectors, comparable, record = word_vectors(s.embeddings, meta, sizes["embedding_dim"], s.seed)
    config = wp_run_config(s.dataset, s.variant, s.fit, sizes, s.wp, s.model, meta, (source, comparable, record))
    trained = "uniform" if attention == "guide" else attention
    model = model_from_options(meta, encoder, trained, sizes, s.model, s.seed, vectors)
    if attention == "guide":
        if "test_attention" not in inputs:
            raise ValueError(f"variant {s.variant!r} needs guide files (the donor run's stored attention)")
        guides = read_donor(inputs, instances, s.wp.preloaded_alignment, f"guide of {s.variant}")
        model = GuidedClassifier(model.config, guides, vectors)
        config["guide"] = str(Path(inputs["test_attention"]).parent)
    print(f"W&P {s.variant} on {s.dataset}, seed {s.seed}: {sum(p.numel() for p in model.parameters())} parameters")
    result = fit(model, instances, resolved(s.fit), Classification(first_epoch_eligible=True))
    return write_wp_run(model, result, instances, config, outputs)


def run_wp_adversary(*, inputs: Files, outputs: Files, settings: WPRunSettings, threads: int = 1) -> dict:
    """Train the model-consistent adversary against the base run for one lambda (W&P §4); it starts from the base
    model's initialisation (same seed, same word vectors)."""
    from attnexp.analyses.wp.consistent_adversary import AdversaryObjective, train_consistent_adversary
    from attnexp.analyses.wp.donors import read_donor
    from attnexp.analyses.wp.jsd_tvd import aggregate, divergences_from_base
    from attnexp.data.preprocess import read_preprocessed
    from attnexp.io import read_json, write_json
    from attnexp.models.device import set_threads
    from attnexp.models.train import model_from_options, word_vectors

    set_threads(threads)
    s, wp, sizes = settings, settings.wp, settings.hyperparameters
    base_files = {key.removeprefix("base_"): path for key, path in inputs.items() if key.startswith("base_")}
    instances, meta = read_preprocessed(inputs["instances"], inputs["meta"])
    base = read_donor(base_files, instances, wp.preloaded_alignment, "base run", with_p=True)
    objective = AdversaryObjective(
        lam=s.lam,
        tvd_binary=wp.tvd_binary,
        class_weight_scaling=wp.adv_loss_class_weight_scaling,
        max_epochs=wp.adversary.max_epochs,
        patience=wp.adversary.patience,
    )
    source, vectors, comparable, record = word_vectors(s.embeddings, meta, sizes["embedding_dim"], s.seed)
    config = wp_run_config(s.dataset, ADVERSARY_VARIANT, s.fit, sizes, wp, s.model, meta, (source, comparable, record))
    config.update({"lambda": s.lam, "objective": {"max_epochs": objective.max_epochs, "patience": objective.patience}})
    model = model_from_options(meta, *VARIANTS["base"], sizes, s.model, s.seed, vectors)
    print(f"W&P adversary on {s.dataset}, seed {s.seed}, lambda {s.lam}")
    result = train_consistent_adversary(model, instances, base, resolved(s.fit), objective)
    write_wp_run(model, result, instances, config, outputs)
    tvd, divergence = divergences_from_base(read_test_outputs(base_files), read_test_outputs(outputs), wp.tvd_binary)
    metrics = {
        **read_json(outputs["metrics"]),
        "mean_tvd": aggregate(tvd, wp.report_aggregation),
        "mean_jsd": aggregate(divergence, wp.report_aggregation),
        "aggregation": wp.report_aggregation,
    }
    write_json(outputs["metrics"], metrics)
    return metrics


def run_wp_jw_adversary(*, inputs: Files, outputs: Files, settings: WPAnalysisSettings, threads: int = 1) -> None:
    """J&W's per-instance adversary (jain-wallace §6.5) on the W&P base model's test set (or its seeded sample,
    `analyses.test_sample`), `wp.jw_adversary_runs` times with different starts; the analyses' adversary.parquet
    columns plus `run`."""
    import pandas as pd

    from attnexp.analyses.jw.instances import adversary_table
    from attnexp.data.preprocess import split_frame
    from attnexp.io import read_parquet, write_parquet
    from attnexp.models.device import set_threads
    from attnexp.models.settings import Compute
    from attnexp.pipeline import load_trained

    set_threads(threads)
    analysis, runs, seed = resolved(settings.analysis), settings.wp.jw_adversary_runs, settings.wp.base_seed
    # checked against the dataset's meta.json (beside the instances): trained on this data
    model = load_trained(inputs["model"], inputs.get("meta"), instances=inputs["instances"])
    classifier = Compute(analysis.device, analysis.padded_lstm).apply(model)
    test = analysis.sample(split_frame(read_parquet(inputs["instances"]), "test"))  # analyses.test_sample
    parts = []
    for run in range(runs):
        print(f"J&W adversary run {run + 1}/{runs}")
        parts.append(adversary_table(classifier, test, analysis, seed + 1 + run).assign(run=run))
    write_parquet(outputs["table"], pd.concat(parts, ignore_index=True))


def run_wp_seed_variance(*, inputs: Files, outputs: Files, settings: WPAnalysisSettings, threads: int = 1) -> None:
    """seed_variance.parquet: every extra seed against the base seed, per test instance."""
    runs = settings.runs
    compared = [read_test_outputs(f) for f in runs["seeds"]]
    write_variance_table(runs["base"], compared, outputs["seed_variance"], settings.wp.seed_plot_variant)


def run_wp_adversary_variance(*, inputs: Files, outputs: Files, settings: WPAnalysisSettings, threads: int = 1) -> None:
    """adv_variance.parquet: J&W's per-instance adversary runs (their epsilon-max picks) against the base, per test
    instance."""
    import pandas as pd

    from attnexp.io import read_parquet

    runs, variant = settings.runs, settings.wp.seed_plot_variant
    frame = read_parquet(runs["jw_adversary"])
    compared = [
        (
            pd.DataFrame({"instance_id": part["instance_id"], "p": [o[1] for o in part["adversarial_output"]]}),
            part[["instance_id"]].assign(attention=part["adversarial_attention"]),
        )
        for _, part in frame.groupby("run", sort=True)
    ]
    write_variance_table(runs["base"], compared, outputs["adv_variance"], variant)


def read_test_outputs(run: Files) -> tuple:
    """A W&P run's stored test outputs (paths.wp_run_files): its predictions and its attention, as DataFrames."""
    from attnexp.io import read_parquet

    return read_parquet(run["test_predictions"]), read_parquet(run["test_attention"])


def write_variance_table(base: Files, compared: list[tuple], output, variant: str):
    """The base run's test outputs against `compared` (predictions, attention) per test instance
    (`analyses.wp.seed_variance.variance_table`), written to `output`."""
    from attnexp.analyses.wp.seed_variance import variance_table
    from attnexp.io import write_parquet

    frame = variance_table(read_test_outputs(base), compared, variant)
    write_parquet(output, frame)
    print(f"{len(compared)} comparison run(s), {len(frame)} test instances: median attn_diff {frame.attn_diff.median():.4f}")
    return frame


# one script (wp_variance.py) for both rules: `call` runs the rule's own job
run_wp_variance = ByRule(wp_seed_variance=run_wp_seed_variance, wp_adversary_variance=run_wp_adversary_variance)


def run_wp_jsd_tvd_points(*, inputs: Files, outputs: Files, settings: WPAnalysisSettings, threads: int = 1) -> None:
    """jsd_tvd_points.parquet for one dataset: every seed, the uniform model and each adversary (in the order of
    its lambda sweep) against the base."""
    from attnexp.analyses.wp.jsd_tvd import jsd_tvd_points
    from attnexp.io import read_json, read_parquet, write_parquet

    runs, wp = settings.runs, settings.wp
    points = jsd_tvd_points(
        settings.dataset,
        read_test_outputs(runs["base"]),
        ((read_json(f["metrics"])["seed"], read_test_outputs(f)) for f in runs["seeds"]),  # read one run at a time
        read_test_outputs(runs["uniform"]),
        (read_test_outputs(f) for f in runs["adversaries"]),
        wp.lambdas_for(settings.dataset),
        wp.tvd_binary,
        wp.report_aggregation,
        read_parquet(runs["jw_adversary"]) if runs["jw_adversary"] else None,
    )
    write_parquet(outputs["points"], points)
    print(f"{len(points)} points for {settings.dataset}")


def run_wp_jsd_tvd_figure(*, inputs: Files, outputs: Files, settings: FigureSettings, threads: int = 1) -> None:
    """The JSD-TVD plane of one dataset (Test 4)."""
    from attnexp.report import wp

    drawn = [outputs["jsd_tvd_png"], outputs["jsd_tvd_pdf"]]
    wp.draw_jsd_tvd_figure(points=inputs["points"], paths=drawn, title=settings.title, style=settings.look.style())


def run_wp_variance_figures(*, inputs: Files, outputs: Files, settings: FigureSettings, threads: int = 1) -> None:
    """The variance violin and scatter of one dataset (Test 2; classes named by its `meta`)."""
    from attnexp.io import read_json
    from attnexp.report import wp

    wp.draw_variance_figures(
        variance=inputs["variance"],
        violin=[outputs["violin_png"], outputs["violin_pdf"]],
        scatter=[outputs["scatter_png"], outputs["scatter_pdf"]],
        compared=settings.drawn,
        title=settings.title,
        style=settings.look.style(),
        classes=read_json(inputs["meta"])["classes"],
    )


# one script (wp_figures.py) for both rules: `call` runs the rule's own job
run_wp_figures = ByRule(wp_variance_figures=run_wp_variance_figures, wp_jsd_tvd_figure=run_wp_jsd_tvd_figure)


def write_wp_run(model, result, instances, run_config: dict, outputs: dict, extra_metrics: dict | None = None) -> dict:
    """Store a run's donor outputs (predictions and attention per split) and its run files."""
    from attnexp.analyses.wp.donors import DONOR_SPLITS, donor_outputs
    from attnexp.data.preprocess import split_frame
    from attnexp.io import write_parquet
    from attnexp.models.checkpoint import write_run

    for split in DONOR_SPLITS:
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


def wp_run_config(
    dataset: str,
    variant: str,
    fit: FitSettings,
    hyperparameters: dict,
    settings: WPSettings,
    model_options: dict,
    meta: dict,
    embeddings: tuple[str, bool | None, dict | None] = ("random", None, None),
) -> dict:
    """A W&P run's config.yaml (`train.build_run_config`); `embeddings` = (source, comparable, the `vectors` record)
    from `word_vectors`."""
    from attnexp.pipeline.train import build_run_config

    source, comparable, record = embeddings
    encoder, attention = VARIANTS.get(variant, VARIANTS["base"])
    identity = {"dataset": dataset, "variant": variant, "encoder": encoder, "attention": attention, "seed": fit.seed}
    return build_run_config(
        identity,
        meta,
        fit,
        selection={"first_epoch_eligible": True},
        hyperparameters=hyperparameters,
        model=model_options,
        embeddings=source,
        vectors=record,
        comparable=bool(meta["comparable"]) if comparable is None else comparable,
        wp=settings.run_options(),
    )
