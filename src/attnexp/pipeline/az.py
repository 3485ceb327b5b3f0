"""Abnar & Zuidema jobs: raw / rollout / flow relevance at every layer of a trained Transformer (or Hugging Face
model) against blank-out and gradient importance (Spearman per example, §5) and subject recovery on agreement
data; the per-seed summaries combined; the tables and figures (`attnexp.report.az`); A&Z Fig. 4, the pronoun
examples, on the configured masked and causal LMs (`attnexp.analyses.az.pronouns`, `attnexp.report.pronouns`)."""

from attnexp.pipeline import Files
from attnexp.pipeline.settings import AZAnalysisSettings, FigureSettings, PronounSettings, TableSettings


def run_az_analyse(*, inputs: Files, outputs: Files, settings: AZAnalysisSettings, threads: int = 1) -> None:
    """Relevance, importance, correlations and subject recovery for one trained model (test split), on the
    configured device. `outputs`: relevance, correlations (parquet), summary, recovery (CSV), timings (flow seconds
    per example, JSON), and with `settings.erasure` the erasure tests of the A&Z rankings (erasure_attention,
    erasure_input); the tables' rows are labelled `settings.task` (a Hugging Face run: `{dataset}@{model}`)."""
    from attnexp.analyses.az import gradient_measure
    from attnexp.analyses.az.measures import (
        correlations,
        reads_closing_marker,
        relevance_and_importance,
        subject_recovery,
        summarise_correlations,
    )
    from attnexp.data.preprocess import split_frame
    from attnexp.data.sampling import seeded_sample
    from attnexp.io import read_parquet, write_csv, write_json, write_parquet
    from attnexp.models.device import resolve_device, set_threads
    from attnexp.pipeline import load_trained

    dataset, task, device, seed, erasure = settings.dataset, settings.task, settings.device, settings.seed, settings.erasure
    budget = settings.memory_budget_mb
    settings, model, instances = settings.az, inputs["model"], inputs["instances"]
    set_threads(threads)
    # checked against the dataset's meta.json (beside the instances): trained on this data
    loaded = load_trained(model, inputs.get("meta"), resolve_device(device), instances=instances)
    test = seeded_sample(split_frame(read_parquet(instances), "test"), settings.n_examples or None, settings.sample_seed)
    measure = gradient_measure(settings.gradient, loaded.input_shift_invariant)  # refuses grad on a pre-LN model
    print(f"{dataset}: {len(test)} test examples, {loaded.config.n_layers} layers, {settings}")
    print(f"input gradient shown in the tables: {measure} (az.gradient: {settings.gradient})")
    relevance = relevance_and_importance(
        loaded,
        test,
        batch_size=settings.batch_size,
        relevance_row=settings.relevance_row,
        rollout_residual=settings.rollout_residual,
        flow_solver=settings.flow_solver,
        score=settings.score,
        memory_budget_mb=budget,
    )
    relevance["subject"] = test["rationale"].map(list).to_numpy()
    dataset = task
    closing = reads_closing_marker(loaded, test)
    table = correlations(
        relevance, dataset, exclude_special=settings.exclude_special, spearman=settings.spearman, closing=closing
    )
    summary = summarise_correlations(
        table, nan_policy=settings.nan_policy, cumulative_layer_lists=settings.cumulative_layer_lists
    )
    recovery = subject_recovery(relevance, test["rationale"].map(list), dataset)
    flow_seconds = relevance.pop("flow_seconds")  # wall time: kept out of the byte-identical relevance table
    write_parquet(outputs["relevance"], relevance)
    write_parquet(outputs["correlations"], table)
    write_csv(outputs["summary"], summary)
    write_csv(outputs["recovery"], recovery)
    timings = {"instance_id": relevance["instance_id"].tolist(), "flow_seconds": flow_seconds.round(6).tolist()}
    write_json(outputs["timings"], timings)
    print(f"flow: {flow_seconds.mean():.4f}s per example (mean), {flow_seconds.sum():.1f}s total")
    print(summary.to_string())
    if erasure is not None:  # the A&Z rankings through the erasure tests; `gradient`: the measure's column
        az_erasure(loaded, test, relevance, measure, erasure, seed, settings.batch_size, outputs)


def az_erasure(model, test, relevance, gradient: str, erasure, seed: int, batch_size: int, outputs: Files) -> None:
    """Serrano & Smith's and ERASER's tests of the A&Z rankings (raw, rollout and flow at the last layer, blank-out,
    the input-gradient measure `gradient`) on the analysed test examples (`transformer-self` and Hugging Face models:
    the attention test erases every head's last-layer [CLS] weights)."""
    from attnexp.analyses.erasure.instances import az_rankings, erasure_tables
    from attnexp.io import write_parquet

    rankings = az_rankings(relevance, gradient)
    attention, inputs = erasure_tables(model, test, rankings, erasure, seed=seed, batch_size=batch_size, offset=0)
    write_parquet(outputs["erasure_attention"], attention)
    write_parquet(outputs["erasure_input"], inputs)


def run_az_combine(*, inputs: Files, outputs: Files, settings: TableSettings, threads: int = 1) -> None:
    """Every dataset's correlation summary and subject recovery across its seeds (`settings.runs`: one mapping per
    (dataset, seed) with `seed`, `summary` and `recovery`). With one seed, mean/std/n/n_nan (top1/mrr/share/n)
    are that run's values."""
    import pandas as pd

    from attnexp.analyses.az.measures import RECOVERY_KEYS, SUMMARY_KEYS, mean_with_seed_std
    from attnexp.io import read_csv, write_csv

    runs = settings.runs
    summaries = [read_csv(run["summary"]).assign(seed=int(run["seed"])) for run in runs]
    recoveries = [read_csv(run["recovery"]).assign(seed=int(run["seed"])) for run in runs]
    summary = mean_with_seed_std(pd.concat(summaries, ignore_index=True), SUMMARY_KEYS, ["mean", "std"], ["n", "n_nan"], "mean")
    recovery = pd.concat([f for f in recoveries if len(f)] or recoveries[:1], ignore_index=True)
    recovery = mean_with_seed_std(recovery, RECOVERY_KEYS, ["top1", "mrr", "share"], ["n"], "top1")
    write_csv(outputs["summary"], summary)
    write_csv(outputs["recovery"], recovery)
    print(f"{len(runs)} runs: {summary['task'].nunique()} datasets, seeds {sorted({int(r['seed']) for r in runs})}")


def run_az_tables(*, inputs: Files, outputs: Files, settings: TableSettings, threads: int = 1) -> None:
    """The A&Z tables (correlations by layer, subject recovery) from the combined summaries."""
    from attnexp.report.az import write_az_tables

    write_az_tables(summary=inputs["summary"], recovery=inputs["recovery"], gradients=settings.gradients, outputs=outputs)


def run_az_correlation_figure(*, inputs: Files, outputs: Files, settings: FigureSettings, threads: int = 1) -> None:
    """rho against layer for one dataset or Hugging Face run (`settings.title`: its rows' task label)."""
    from attnexp.report.az import write_correlation_figure

    write_correlation_figure(
        summary=inputs["summary"],
        dataset=settings.title,
        gradient=settings.gradient,
        style=settings.look.style(),
        outputs=outputs,
    )


def run_az_cls_maps(*, inputs: Files, outputs: Files, settings: FigureSettings, threads: int = 1) -> None:
    """The [CLS] relevance maps across layers of two picked test examples of one run."""
    from attnexp.report.az import write_cls_maps

    write_cls_maps(relevance=inputs["relevance"], meta=inputs["meta"], style=settings.look.style(), outputs=outputs)


def run_az_pronouns(*, inputs: Files, outputs: Files, settings: PronounSettings, threads: int = 1) -> None:
    """A&Z Fig. 4 of one language model and one pronoun example: the candidates' relative probabilities at q and
    raw / rollout / flow from q at every layer (`outputs`: table, the numbers as CSV; png, pdf). A masked LM is
    explained at the mask, a causal LM (kind prompted) at the token before it, reading the text before it only."""
    from attnexp.analyses.az.pronouns import PronounExample, load_language_model, pronoun_relevance, reading_table
    from attnexp.io import write_csv
    from attnexp.models.device import resolve_device, set_threads
    from attnexp.report.pronouns import write_pronoun_figure

    set_threads(threads)
    causal = settings.kind == "prompted"
    example = PronounExample(**settings.example)
    device = resolve_device(settings.device)
    model, tokenizer = load_language_model(
        settings.checkpoint,
        causal=causal,
        gguf_file=settings.gguf_file,
        allow_download=settings.allow_download,
        device=device,
    )
    print(f"{settings.model} ({'causal' if causal else 'masked'} LM, {device}): {example.sentence!r}")
    reading = pronoun_relevance(
        model,
        tokenizer,
        example,
        causal=causal,
        rollout_residual=settings.rollout_residual,
        flow_solver=settings.flow_solver,
    )
    print(f"read {reading.text!r} as {len(reading.tokens)} tokens; q = {reading.query} ({reading.tokens[reading.query]!r})")
    for word, piece, share, p in zip(example.candidates, reading.pieces, reading.relative, reading.vocabulary, strict=True):
        print(f"  {word!r} (first sub-token {piece!r}): {share:.4f} of the candidates, p = {p:.3g} over the vocabulary")
    missing = [word for word, positions in reading.referents.items() if not positions]
    if missing:
        print(f"referents not in the text read (not marked): {', '.join(missing)}")
    write_csv(outputs["table"], reading_table(reading, settings.model))
    write_pronoun_figure(table=outputs["table"], sentence=example.sentence, style=settings.look.style(), outputs=outputs)
