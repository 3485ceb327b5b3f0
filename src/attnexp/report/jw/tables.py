"""J&W's tables (§7): dataset statistics and test performance (Table 1), Kendall τ summary (Table 2),
cross-measure τ differences (§6.6) and planted-rationale recovery. Each is written by the shared writer
(`report.tables.write_table`): CSV (long, for machines) plus Markdown and LaTeX (wide, the paper layout).

Every statistic is computed per seed first; with several seeds a cell reports the across-seed mean and a
percentile-bootstrap 95% interval of that mean (`ci_low`, `ci_high`; NaN with a single seed).
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from attnexp.chance import majority_rate, near_chance
from attnexp.io import read_csv, read_json, read_parquet
from attnexp.report.tables import dataset_order, mean_with_bootstrap_ci, write_table

MODEL_KEYS = ["dataset", "encoder", "attention"]
SIGNIFICANCE = 0.05
LEGACY_LABELS = {"attn_loo": "ag", "attn_grad": "al", "grad_loo": "gl"}  # quirk corrstats.legacy_labels
DIFFERENCES = {"gradloo_minus_attnloo": ("grad_loo", "attn_loo"), "gradloo_minus_attngrad": ("grad_loo", "attn_grad")}


# --- Table 1 ---


def _by_class(counts: Mapping, classes: Sequence[str]) -> str:
    """ "total (n0/n1/…)"; the total alone for more than 3 classes (bAbI's answers), where the list would widen
    the table past a screen."""
    values = [int(counts.get(str(i), 0)) for i in range(len(classes))]
    return f"{sum(values)} ({'/'.join(map(str, values))})" if len(values) < 4 else str(sum(values))


def dataset_statistics(metas: Mapping[str, Mapping]) -> pd.DataFrame:
    """|V| (incl. the 4 specials), average real length, train/test sizes by class, per dataset."""
    rows = []
    for dataset, meta in metas.items():
        counts = meta.get("class_counts", {})
        rows.append(
            {
                "dataset": dataset,
                "task": meta["task"],
                "vocab_size": len(meta["vocab"]),
                "mean_length": float(meta["mean_length"]),
                "train": int(meta["sizes"]["train"]),
                "test": int(meta["sizes"]["test"]),
                "train_by_class": _by_class(counts.get("train", {}), meta["classes"]),
                "test_by_class": _by_class(counts.get("test", {}), meta["classes"]),
                "classes": "/".join(map(str, meta["classes"])) if len(meta["classes"]) < 4 else f"{len(meta['classes'])} answers",
                "chance_rate": majority_rate(counts.get("test", {}), len(meta["classes"])),
                "comparable": bool(meta.get("comparable", True)),
            }
        )
    return pd.DataFrame(rows)


def performance_metric(task: str) -> str:
    """Table 1's test performance: positive-class F1 for binary classification, accuracy for QA/NLI."""
    return "f1_positive" if task == "bc" else "accuracy"


def table1(
    metas: Mapping[str, Mapping],
    metrics: Sequence[Mapping],
    bootstrap_options: Mapping | None = None,
    models: Sequence[Mapping] | None = None,
) -> pd.DataFrame:
    """One row per dataset x encoder x attention: dataset statistics plus across-seed test performance, and
    `near_chance_seeds`: how many seeds' test accuracy is not significantly above the majority-class rate
    (`chance_rate`; attnexp.chance). `models`: each metrics' labels (dataset, encoder, attention, seed), in the same
    order; without them the metrics' own (a Hugging Face run's are `hf` and its name)."""
    labels = metrics if models is None else models
    stats = dataset_statistics(metas)
    tasks = dict(zip(stats["dataset"], stats["task"], strict=True))
    chance = dict(zip(stats["dataset"], stats["chance_rate"], strict=True))
    tests = dict(zip(stats["dataset"], stats["test"], strict=True))
    per_seed = pd.DataFrame(
        [
            {
                **{key: label[key] for key in ("dataset", "encoder", "attention", "seed")},
                "metric": performance_metric(tasks[label["dataset"]]),
                "mean": float(m[performance_metric(tasks[label["dataset"]])]),
                "f1_macro": float(m.get("f1_macro", np.nan)),
                "near_chance_seeds": int(
                    near_chance(float(m["accuracy"]), int(m.get("n", tests[label["dataset"]])), chance[label["dataset"]])
                ),
            }
            for label, m in zip(labels, metrics, strict=True)
        ]
    )
    performance = mean_with_bootstrap_ci(
        per_seed,
        [*MODEL_KEYS, "metric"],
        ["mean", "f1_macro"],
        sums=["near_chance_seeds"],
        bootstrap_options=bootstrap_options,
    )
    performance["std"] = per_seed.groupby([*MODEL_KEYS, "metric"], sort=False)["mean"].std(ddof=0).to_numpy()
    return stats.merge(performance, on="dataset")


def table1_display(table: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Wide layout: one row per dataset, the metric and one performance column per model ("mean ± std" over
    seeds, "(near chance)" where seeds are) first, so that the scores stay on screen; the statistics after them."""
    table = table.assign(
        cell=[
            _cell(r.mean, r.std, r.n_seeds, r.ci_low, r.ci_high) + _chance_note(r.near_chance_seeds, r.n_seeds)
            for r in table.itertuples()
        ]
    )
    table["model"] = table["encoder"] + "-" + table["attention"]
    wide = table.pivot(index="dataset", columns="model", values="cell")
    stats = table.drop_duplicates("dataset").set_index("dataset")
    statistics = pd.DataFrame(
        {
            "|V|": stats["vocab_size"],
            "avg. length": stats["mean_length"].map("{:.1f}".format),
            "train (by class)": stats["train_by_class"],
            "test (by class)": stats["test_by_class"],
        }
    )
    metric = stats["metric"].map({"f1_positive": "F1", "accuracy": "accuracy"}).rename("metric")
    models = list(dict.fromkeys(table["model"]))
    display = wide[models].join(statistics).reindex([d for d in order if d in wide.index])
    return (
        display.join(metric)
        .reset_index()
        .rename(columns={"dataset": "Dataset"})[["Dataset", "metric", *models, *statistics.columns]]
    )


def _chance_note(near: int, seeds: int) -> str:
    if not near:
        return ""
    return " (near chance)" if seeds == 1 else f" (near chance: {near}/{seeds} seeds)"


def _cell(mean: float, std: float, n_seeds: int, low: float, high: float, digits: int = 3) -> str:
    if not np.isfinite(mean):
        return "–"
    text = f"{mean:.{digits}f}"
    if n_seeds > 1:
        text += f" ± {std:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"
    return text


# --- Table 2 ---


def kendall_per_seed(kendall: pd.DataFrame, classes: Sequence[str], nan_policy: str = "omit") -> pd.DataFrame:
    """mean, population std, sig_frac (p ≤ 0.05), n, n_nan per pair and group for one model's per-instance τ.

    Groups: "Overall", plus "class <name>" per predicted class when fewer than 4 distinct classes are predicted (§6.3).
    `omit` drops undefined τ from every statistic; `propagate` keeps them (NaN mean; NaN p is not significant).
    """
    if nan_policy not in ("omit", "propagate"):
        raise ValueError(f"unknown kendall nan_policy {nan_policy!r}; choose omit or propagate")
    frame = kendall.assign(
        tau=kendall["tau"].where(~kendall["is_nan"]),
        significant=(kendall["p_value"] <= SIGNIFICANCE) & ~kendall["is_nan"],
        group="Overall",
    )
    if kendall["predicted"].nunique() < 4:
        by_class = frame.assign(group=[f"class {classes[int(i)]}" for i in frame["predicted"]])
        frame = pd.concat([frame, by_class], ignore_index=True)
    kept = frame[~frame["is_nan"]] if nan_policy == "omit" else frame
    grouped = kept.groupby(["pair", "group"], sort=False)
    summary = pd.DataFrame(
        {
            "mean": grouped["tau"].agg(lambda t: t.mean(skipna=False) if len(t) else np.nan),
            "std": grouped["tau"].agg(lambda t: t.std(ddof=0, skipna=False) if len(t) else np.nan),
            "sig_frac": grouped["significant"].mean(),
            "n": grouped.size(),
        }
    )
    n_nan = frame.groupby(["pair", "group"], sort=False)["is_nan"].sum().rename("n_nan")
    summary = summary.reindex(n_nan.index).join(n_nan)
    summary["n"] = summary["n"].fillna(0).astype(int)
    return summary.reset_index()


def table2(
    models: Sequence[Mapping],
    classes: Mapping[str, Sequence[str]],
    nan_policy: str = "omit",
    bootstrap_options: Mapping | None = None,
) -> pd.DataFrame:
    """Kendall τ summary across seeds for every model; `models` items: dataset, encoder, attention, seed, kendall (frame)."""
    per_seed = pd.concat(
        [
            kendall_per_seed(m["kendall"], classes[m["dataset"]], nan_policy).assign(**{k: m[k] for k in (*MODEL_KEYS, "seed")})
            for m in models
        ],
        ignore_index=True,
    )
    table = mean_with_bootstrap_ci(
        per_seed,
        [*MODEL_KEYS, "pair", "group"],
        ["mean", "std", "sig_frac"],
        sums=["n", "n_nan"],
        bootstrap_options=bootstrap_options,
        skipna=nan_policy == "omit",
    )
    table["nan_policy"] = nan_policy
    return table


def table2_display(table: pd.DataFrame, order: Sequence[str], pairs: Sequence[str]) -> pd.DataFrame:
    """Paper layout: rows dataset x predicted-class group x model; one column per pair, "μ ± σ (sig. frac.)"."""
    table = table[table["pair"].isin(pairs)].copy()
    table["cell"] = [
        f"{r.mean:.2f} ± {r.std:.2f} ({r.sig_frac:.2f})"
        + (f" [{r.ci_low:.2f}, {r.ci_high:.2f}]" if r.n_seeds > 1 else "")
        + (f"; {int(r.n_nan)} undef." if r.n_nan else "")
        if np.isfinite(r.mean)
        else f"– ({int(r.n_nan)} undef.)"
        for r in table.itertuples()
    ]
    table["model"] = table["encoder"] + "-" + table["attention"]
    table["instances"] = table["n"] + table["n_nan"]
    keys = ["dataset", "group", "model"]
    wide = table.pivot_table(index=keys, columns="pair", values="cell", aggfunc="first", sort=False)
    wide = wide[[p for p in pairs if p in wide.columns]]
    # n: the group's instances, summed over seeds (undefined τ included)
    wide.insert(0, "n", table.groupby(keys, sort=False)["instances"].max().reindex(wide.index).astype(int))
    wide = wide.reset_index()
    wide["_order"] = wide["dataset"].map({d: i for i, d in enumerate(order)})
    wide["_group"] = wide["group"].where(wide["group"] != "Overall", "")
    wide = wide.sort_values(["_order", "_group"], kind="stable").drop(columns=["_order", "_group"])
    return wide.rename(columns={"dataset": "Dataset", "group": "Group", "model": "Model"})


# --- cross-measure (§6.6) ---


def cross_measure_per_seed(kendall: pd.DataFrame) -> pd.DataFrame:
    """Overall mean/std of τ(attn, LOO), τ(attn, grad), τ(grad, LOO) and of the per-instance differences; n: the
    instances with a defined value, instances: every analysed instance."""
    tau = kendall.assign(tau=kendall["tau"].where(~kendall["is_nan"]))
    wide = tau.pivot_table(index="instance_id", columns="pair", values="tau", aggfunc="first", dropna=False)
    columns = {p: wide[p] for p in ("attn_loo", "attn_grad", "grad_loo") if p in wide}
    for name, (left, right) in DIFFERENCES.items():
        if left in wide and right in wide:
            columns[name] = wide[left] - wide[right]
    values = pd.DataFrame(columns)
    return pd.DataFrame(
        {
            "measure": values.columns,
            "mean": values.mean().to_numpy(),
            "std": values.std(ddof=0).to_numpy(),
            "n": values.notna().sum().to_numpy(),
            "instances": len(wide),  # every analysed instance, defined τ or not
        }
    )


def cross_measure(
    models: Sequence[Mapping], legacy_labels: bool = False, bootstrap_options: Mapping | None = None
) -> pd.DataFrame:
    """Cross-measure summary per model across seeds; `legacy_labels` renames pairs as the authors' CorrStats (ag/al/gl)."""
    per_seed = pd.concat(
        [cross_measure_per_seed(m["kendall"]).assign(**{k: m[k] for k in (*MODEL_KEYS, "seed")}) for m in models],
        ignore_index=True,
    )
    table = mean_with_bootstrap_ci(
        per_seed, [*MODEL_KEYS, "measure"], ["mean", "std"], sums=["n", "instances"], bootstrap_options=bootstrap_options
    )
    if legacy_labels:
        table["measure"] = table["measure"].replace(LEGACY_LABELS)
    return table


def cross_measure_display(table: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    table = table.copy()
    table["cell"] = [
        f"{r.mean:.3f} ± {r.std:.3f}" + (f" [{r.ci_low:.3f}, {r.ci_high:.3f}]" if r.n_seeds > 1 else "")
        for r in table.itertuples()
    ]
    table["model"] = table["encoder"] + "-" + table["attention"]
    wide = table.pivot_table(index=["dataset", "model"], columns="measure", values="cell", aggfunc="first", sort=False)
    wide = wide[list(dict.fromkeys(table["measure"]))]
    # n: the model's analysed test instances, summed over seeds
    wide.insert(0, "n", table.groupby(["dataset", "model"], sort=False)["instances"].max().reindex(wide.index).astype(int))
    wide = wide.reset_index()
    wide = wide.sort_values("dataset", key=lambda d: d.map({n: i for i, n in enumerate(order)}), kind="stable")
    return wide.rename(columns={"dataset": "Dataset", "model": "Model"})


# --- planted-rationale recovery ---


def rationale_table(frames: Sequence[pd.DataFrame], bootstrap_options: Mapping | None = None) -> pd.DataFrame:
    """Across-seed precision@k and AUC of each importance measure at recovering the planted cue tokens."""
    columns = [*MODEL_KEYS, "measure", "n_seeds", "precision_at_k", "auc", "n", "ci_low", "ci_high", "auc_ci_low", "auc_ci_high"]
    per_seed = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else None
    if per_seed is None:
        return pd.DataFrame(columns=columns)
    table = mean_with_bootstrap_ci(
        per_seed.rename(columns={"precision_at_k": "mean"}),
        [*MODEL_KEYS, "measure"],
        ["mean", "auc"],
        sums=["n"],
        bootstrap_options=bootstrap_options,
    )
    auc = mean_with_bootstrap_ci(
        per_seed.rename(columns={"auc": "mean"}), [*MODEL_KEYS, "measure"], ["mean"], bootstrap_options=bootstrap_options
    )
    table["auc_ci_low"], table["auc_ci_high"] = auc["ci_low"].to_numpy(), auc["ci_high"].to_numpy()
    return table.rename(columns={"mean": "precision_at_k"})[columns]


def rationale_display(table: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    if table.empty:
        return pd.DataFrame(columns=["Dataset", "Model", "n", "measure", "precision@k", "AUC"])
    table = table.copy()
    table["Model"] = table["encoder"] + "-" + table["attention"]
    table["precision@k"] = [
        _cell(r.precision_at_k, np.nan, 1, r.ci_low, r.ci_high) + _ci(r.n_seeds, r.ci_low, r.ci_high) for r in table.itertuples()
    ]
    table["AUC"] = [_cell(r.auc, np.nan, 1, 0, 0) + _ci(r.n_seeds, r.auc_ci_low, r.auc_ci_high) for r in table.itertuples()]
    table = table.sort_values("dataset", key=lambda d: d.map({n: i for i, n in enumerate(order)}), kind="stable")
    return table.rename(columns={"dataset": "Dataset"})[["Dataset", "Model", "n", "measure", "precision@k", "AUC"]]


def _ci(n_seeds: int, low: float, high: float) -> str:
    return f" [{low:.3f}, {high:.3f}]" if n_seeds > 1 else ""


def load_metas(paths: Mapping[str, str | Path]) -> dict[str, dict]:
    return {dataset: read_json(path) for dataset, path in paths.items()}


# --- entry points for the workflow: paths in, files out (each output: {"csv", "md", "tex"} -> path) ---

# what every analyses table says about its instances (the rendered report's captions fill in the sample size)
INSTANCES = (
    "n = test instances analysed per model, summed over seeds: the whole test split, or a seeded sample of at most "
    "analyses.test_sample.n per model when that is set (analysis_config.yaml records it)."
)

CAPTIONS = {
    "table1": "Table 1 analogue: test performance per model (F1 of the positive class for binary classification, "
    "accuracy for QA/NLI) and dataset statistics (|V| with the 4 specials, average real length, split sizes by class). "
    "near chance: test accuracy not significantly above always predicting the majority class (one-sided binomial "
    "test, p > 0.05); such a model's attention and importance explain little. Test performance is over the whole "
    "test split (analyses.test_sample samples the analyses only).",
    "table2": "Table 2 analogue: Kendall τ between attention and gradient / leave-one-out importance, mean ± std "
    "(fraction of instances with p ≤ 0.05) per dataset, predicted class and model; n = analysed test instances in "
    "the group, summed over seeds (the whole test split, or a seeded sample of at most analyses.test_sample.n per "
    "model when that is set); undef. = instances with undefined τ. Gradient = |⟨∂ŷ/∂e_t, e_t⟩| at the model's input vectors "
    "e_t: the word embedding (J&W models, J&W's definition), token + position embedding (transformer-tiedcls), the "
    "embedding module's output LayerNorm(word + position + type) (Hugging Face models).",
    "cross_measure": "Cross-measure summary (J&W §6.6): mean ± std of τ per pair and of the per-instance differences "
    "τ(grad, LOO) − τ(attn, LOO) and τ(grad, LOO) − τ(attn, grad). " + INSTANCES,
    "rationale_recovery": "Planted-rationale recovery: precision@k and ROC-AUC of each importance measure at finding "
    "the generator's cue tokens (planted data only); n = analysed test instances with planted cues, summed over "
    "seeds (all of the test split's, or those of the seeded sample when analyses.test_sample is set).",
}


def _labelled(models: Sequence[Mapping], paths: Sequence[str | Path]) -> list[dict]:
    if len(models) != len(paths):
        raise ValueError(
            f"{len(models)} model labels but {len(paths)} kendall tables; the workflow must pass them in the same order"
        )
    return [
        {**model, "kendall": read_parquet(path, columns=["instance_id", "predicted", "pair", "tau", "p_value", "is_nan"])}
        for model, path in zip(models, paths, strict=True)
    ]


def build_table1(
    *,
    datasets: Sequence[str],
    metas: Sequence[str | Path],
    metrics: Sequence[str | Path],
    outputs: Mapping[str, str | Path],
    bootstrap_options: Mapping | None = None,
    models: Sequence[Mapping] | None = None,
) -> pd.DataFrame:
    """Table 1 from each dataset's meta.json (in `datasets` order) and every model's metrics.json (`models`: their
    labels, in the same order)."""
    loaded = [read_json(p) for p in metrics]
    table = table1(load_metas(dict(zip(datasets, metas, strict=True))), loaded, bootstrap_options, models)
    write_table(table, outputs, caption=CAPTIONS["table1"], display=table1_display(table, dataset_order(datasets)))
    return table


def build_table2(
    *,
    models: Sequence[Mapping],
    kendall: Sequence[str | Path],
    datasets: Sequence[str],
    metas: Sequence[str | Path],
    outputs: Mapping[str, str | Path],
    pairs: Sequence[str],
    nan_policy: str,
    bootstrap_options: Mapping | None = None,
) -> pd.DataFrame:
    """Table 2 from every model's kendall.parquet (`models`: the labels, in the same order); `pairs` shown in MD/TeX."""
    classes = {d: m["classes"] for d, m in load_metas(dict(zip(datasets, metas, strict=True))).items()}
    table = table2(_labelled(models, kendall), classes, nan_policy, bootstrap_options)
    write_table(table, outputs, caption=CAPTIONS["table2"], display=table2_display(table, dataset_order(datasets), pairs))
    return table


def build_cross_measure(
    *,
    models: Sequence[Mapping],
    kendall: Sequence[str | Path],
    outputs: Mapping[str, str | Path],
    legacy_labels: bool = False,
    bootstrap_options: Mapping | None = None,
) -> pd.DataFrame:
    table = cross_measure(_labelled(models, kendall), legacy_labels, bootstrap_options)
    order = dataset_order([m["dataset"] for m in models])
    write_table(table, outputs, caption=CAPTIONS["cross_measure"], display=cross_measure_display(table, order))
    return table


def build_rationale_table(
    *, recovery: Sequence[str | Path], outputs: Mapping[str, str | Path], bootstrap_options: Mapping | None = None
) -> pd.DataFrame:
    frames = [read_csv(p) for p in recovery]
    table = rationale_table(frames, bootstrap_options)
    order = dataset_order([d for f in frames for d in f.get("dataset", [])])
    write_table(table, outputs, caption=CAPTIONS["rationale_recovery"], display=rationale_display(table, order))
    return table


# --- the catalog's builders (attnexp.report.catalog): a table job's files and settings in, the table written ---


def table1_job(*, inputs: Mapping, outputs: Mapping, settings) -> pd.DataFrame:
    s = settings
    return build_table1(
        datasets=s.datasets,
        metas=inputs["meta"],
        metrics=inputs["metrics"],
        outputs=outputs,
        bootstrap_options=s.bootstrap,
        models=s.models,
    )


def table2_job(*, inputs: Mapping, outputs: Mapping, settings) -> pd.DataFrame:
    s = settings
    return build_table2(
        models=s.models,
        kendall=inputs["kendall"],
        datasets=s.datasets,
        metas=inputs["meta"],
        outputs=outputs,
        pairs=s.pairs,
        nan_policy=s.nan_policy,
        bootstrap_options=s.bootstrap,
    )


def cross_measure_job(*, inputs: Mapping, outputs: Mapping, settings) -> pd.DataFrame:
    s = settings
    return build_cross_measure(
        models=s.models, kendall=inputs["kendall"], outputs=outputs, legacy_labels=s.legacy_labels, bootstrap_options=s.bootstrap
    )


def rationale_job(*, inputs: Mapping, outputs: Mapping, settings) -> pd.DataFrame:
    return build_rationale_table(recovery=inputs["recovery"], outputs=outputs, bootstrap_options=settings.bootstrap)
