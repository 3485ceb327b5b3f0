"""J&W jobs (§6-7): every analysis of one trained model on its test split, then the tables and figures.

The analyses job reads the whole test split, or the seeded sample of `analyses.test_sample`, and writes, in the
test split's length-sorted order: importance.parquet, kendall.parquet, kendall_summary.csv, permutation.parquet,
adversary.parquet, rationale_recovery.csv, and analysis_config.yaml recording every option (quirks included), the
seed and how many test instances it analysed; with `analyses.erasure.enabled` also the erasure tests of
every ranking, erasure_attention.parquet and erasure_input.parquet (`attnexp.analyses.erasure`).
"""

import time
from dataclasses import asdict

from attnexp.pipeline import Files
from attnexp.pipeline.settings import AnalyzeSettings, FigureSettings, resolved


def run_analyze(*, inputs: Files, outputs: Files, settings: AnalyzeSettings, threads: int = 1) -> None:
    """Every analysis of the checkpoint `inputs["model"]` on the test split of the preprocessed data.

    The labels' seed also seeds the permutations and the adversary's start. Without `settings.adversary` (Hugging
    Face models, whose heads do not share one attention vector) the adversary table is written empty.
    """
    import pandas as pd
    import torch

    from attnexp.analyses.erasure import JW_RANKINGS
    from attnexp.analyses.erasure.instances import erasure_tables
    from attnexp.analyses.jw.instances import adversary_table, importance_table, permutation_table
    from attnexp.analyses.jw.kendall import computed_pairs, kendall_tau_per_instance, summarise_kendall
    from attnexp.analyses.jw.rationale import rationale_recovery
    from attnexp.data.preprocess import split_frame
    from attnexp.io import read_json, read_parquet, write_csv, write_parquet, write_yaml
    from attnexp.models.device import set_threads
    from attnexp.models.settings import Compute
    from attnexp.pipeline import load_trained
    from attnexp.provenance import code_version

    labels, adversary, erasure = dict(settings.labels), settings.adversary, settings.erasure
    settings = resolved(settings.analysis)
    model, instances, meta = inputs["model"], inputs["instances"], inputs["meta"]
    set_threads(threads)
    start = time.perf_counter()
    classifier = Compute(settings.device, settings.padded_lstm).apply(load_trained(model, meta))  # trained on this data
    meta = read_json(meta)
    test = split_frame(read_parquet(instances), "test")
    rows = settings.sample(test)  # analyses.test_sample: all, or a seeded sample in the same order
    seed = labels["seed"]
    print(f"analysing {labels}: {len(rows)} of {len(test)} test instances, batch size {settings.batch_size}", flush=True)

    importance = importance_table(classifier, rows, settings)
    write_parquet(outputs["importance"], importance)
    pairs = computed_pairs(loo=settings.bc_loo or not classifier.is_binary, ig=settings.ig_steps is not None)
    taus = kendall_tau_per_instance(importance, pairs)
    write_parquet(outputs["kendall"], taus)
    write_csv(outputs["kendall_summary"], summarise_kendall(taus, meta["classes"], settings.nan_policy, labels))
    write_csv(outputs["rationale"], rationale_recovery(importance, labels=labels))
    if erasure is not None:
        erasure_start = time.perf_counter()
        attention_table, input_table = erasure_tables(
            classifier, rows, importance[["instance_id", *JW_RANKINGS]], erasure, seed=seed, batch_size=settings.batch_size
        )
        write_parquet(outputs["erasure_attention"], attention_table)
        write_parquet(outputs["erasure_input"], input_table)
        print(f"erasure tests done in {time.perf_counter() - erasure_start:.1f}s", flush=True)

    permutation = permutation_table(classifier, rows, settings, torch.Generator().manual_seed(seed))
    write_parquet(outputs["permutation"], permutation)
    if adversary:
        write_parquet(outputs["adversary"], adversary_table(classifier, rows, settings, seed + 1))
    else:
        write_parquet(
            outputs["adversary"], pd.DataFrame({"instance_id": pd.Series(dtype=str), "emax_jsd": pd.Series(dtype=float)})
        )
    write_yaml(
        outputs["config"],
        {
            **labels,
            "settings": {k: v for k, v in asdict(settings).items() if k != "device"},
            "erasure": asdict(erasure) if erasure is not None else None,
            **({} if adversary else {"adversary": "skipped: the model's heads share no single attention vector"}),
            "task": meta["task"],
            "classes": meta["classes"],
            "test_instances": {"analysed": len(rows), "of": len(test)},
            "adversary_report_epsilon": settings.adversary.report_epsilon(meta["task"]),
            "adversary_hinge_epsilon": settings.adversary.hinge_epsilon(meta["task"]),
            "threads": torch.get_num_threads(),  # a different count can change float rounding
            "code_version": code_version(),
        },
    )
    print(f"all analyses done in {time.perf_counter() - start:.1f}s", flush=True)


def run_model_figures(*, inputs: Files, outputs: Files, settings: FigureSettings, threads: int = 1) -> None:
    """Per-model figures: every figure of a dataset's figure models in one batch (with its manifest), or one alone."""
    from attnexp.report.jw.render import render_model_figures

    render_model_figures(
        models=settings.drawn, meta=inputs["meta"], options=settings.look.options(), manifest=outputs.get("manifest")
    )


def run_summary_figures(*, inputs: Files, outputs: Files, settings: FigureSettings, threads: int = 1) -> None:
    """The across-model summary figures per attention (the batch with its manifest, or one alone)."""
    from attnexp.report.jw.render import render_summary_figures

    render_summary_figures(
        kendall=inputs["kendall"],
        cross_measure=inputs["cross"],
        figures=settings.drawn,
        datasets=settings.datasets,
        options=settings.look.options(),
        manifest=outputs.get("manifest"),
    )
