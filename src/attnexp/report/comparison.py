"""Every number beside the published one: the `paper_comparison` table.

The values the papers printed live in one versioned file of this package, `published_values.csv` (read with
importlib.resources; one row per printed number, with its paper, table, page and source). They are for users to
read next to ours: no test asserts that ours equal them, and nothing is tuned towards them.

Ours are gathered per seed from the same files the papers' tables are built from (model metrics.json and
config.yaml, J&W kendall.parquet, W&P run metrics, A&Z per-run correlation summaries), then averaged over seeds
with the percentile-bootstrap 95% interval of the J&W tables (`report.tables.seed_interval`). Each row that the
papers printed and the grid ran gets: ours (mean, interval, number of seeds), the published value, the
difference ours − published, the word vectors the runs started from (`vectors`: random, the paper's file as its
checksum says, or a substitute such as GloVe 6B 50-d), and where the settings differ, why (random or other instead
of the paper's word vectors, another embedding width, a fallback dataset, dev- instead of test-set model selection,
several seeds instead of one run).
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from attnexp.datasets import DATASETS, get_dataset
from attnexp.datasets.vectors import PAPER_VECTORS, RANDOM
from attnexp.datasets.vectors import label as vectors_label
from attnexp.io import read_csv, read_json, read_parquet, read_yaml
from attnexp.report.jw.tables import kendall_per_seed, performance_metric
from attnexp.report.published import PUBLISHED_VALUES, paper_dataset, published_rows
from attnexp.report.tables import dataset_order, seed_interval, write_table

PUBLISHED_COLUMNS = ("paper", "table", "page", "dataset", "model", "measure", "group", "statistic", "value", "source", "note")
KEYS = ["paper", "table", "dataset", "model", "measure", "group", "statistic"]  # one printed number
PAPER_NAMES = {"jw": "Jain & Wallace 2019", "wp": "Wiegreffe & Pinter 2019", "az": "Abnar & Zuidema 2020"}
PAPER_SELECTION = {"jw": "test", "wp": "test"}  # the split the published runs selected their checkpoint on
JW_PAIRS = {"attn_grad": "tau_attn_grad", "attn_loo": "tau_attn_loo"}  # kendall.parquet pair -> measure
AZ_PAPER_MODEL = "transformer-self"  # A&Z's Transformer: standard GPT-2 blocks
AZ_PAPER_SIZE = {"n_layers": 6, "n_heads": 8, "width": 128}  # its size (A&Z §2.1; spec abnar-zuidema.md §2.1)
AZ_PAPER_EXAMPLES = 2000  # the test examples its Tables 1-2 average over (their captions)
MEASURE_NAMES = {
    "test_performance": "test performance",
    "tau_attn_grad": "τ(attention, gradient)",
    "tau_attn_loo": "τ(attention, leave-one-out)",
    "f1_positive": "test F1 (positive class)",
    "spearman_blankout": "ρ(relevance, blank-out)",
    "spearman_grad": "ρ(relevance, input gradient)",
}
COLUMNS = [
    *["paper", "table", "page", "source", "dataset", "paper_dataset", "model", "vectors", "measure", "group", "statistic"],
    *["n_seeds", "ours", "ci_low", "ci_high", "published", "difference", "reason"],
]
CAPTION = (
    "Ours beside the published values: every dataset x model x measure that a paper printed and this grid ran; "
    "ours = mean over seeds [95% bootstrap interval], difference = ours − published; the last column says where "
    "the settings differ. For reading only: nothing is tuned towards the published numbers."
)
REASON_SEPARATOR = "; "  # between the reasons of one row's `reason`
EMPTY_CAPTION = " No dataset of this grid is one the papers report on (e.g. generated data only): no rows."


# --- the published values ---


def published_values() -> pd.DataFrame:
    """The data file as a frame (text columns as str, `value` as float); a clear error if a row lacks a field."""
    return check_published(pd.DataFrame(published_rows()))


def check_published(table: pd.DataFrame) -> pd.DataFrame:
    """The schema of the published values: the columns, a source and a finite value on every row, no duplicates."""
    missing = [c for c in PUBLISHED_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{PUBLISHED_VALUES}: missing columns {missing}; expected {list(PUBLISHED_COLUMNS)}")
    for column in ("paper", "table", "dataset", "model", "measure", "statistic", "source"):
        empty = table.index[table[column].str.strip() == ""].tolist()
        if empty:
            raise ValueError(f"{PUBLISHED_VALUES}: rows {empty} have no {column}")
    table = table.assign(value=pd.to_numeric(table["value"], errors="coerce"))
    if not np.isfinite(table["value"]).all():
        raise ValueError(f"{PUBLISHED_VALUES}: rows {table.index[~np.isfinite(table['value'])].tolist()} have no number")
    duplicated = table.duplicated(KEYS, keep=False)
    if duplicated.any():
        raise ValueError(f"{PUBLISHED_VALUES}: rows {table.index[duplicated].tolist()} give the same number twice")
    return table


# --- ours, per seed ---


def _settings(config: Mapping, meta: Mapping) -> dict:
    """What a run did that the reason column compares with the paper: word vectors (`embeddings`, and `vectors`, their
    label from the run's `vectors` record), embedding width, selection split, fallback note."""
    embeddings = str(config.get("embeddings", RANDOM))
    width = (config.get("hyperparameters") or {}).get("embedding_dim")
    return {
        "embeddings": embeddings,
        "vectors": vectors_label(config.get("vectors"), embeddings),
        "width": "" if width is None else str(width),
        "selection": str((config.get("model_selection") or {}).get("split", "")),
        "fallback": "" if meta.get("comparable", True) else (meta.get("note") or "a substitute for the paper's data"),
    }


def jw_per_seed(models: Sequence[Mapping], metas: Mapping[str, Mapping], nan_policy: str = "omit") -> pd.DataFrame:
    """Table 1 test performance and Table 2 τ (mean, std, fraction significant per predicted class) of each run.

    `models`: dataset, encoder, attention, seed, `metrics` and `config` (dicts), optionally `kendall` (frame);
    classes are named "class <index>" as in the paper's Table 2 (SNLI: sorted label names)."""
    rows = []
    for m in models:
        meta = metas[m["dataset"]]
        base = {
            "paper": "jw",
            "dataset": m["dataset"],
            "model": f"{m['encoder']}-{m['attention']}",
            "seed": int(m["seed"]),
            **_settings(m["config"], meta),
        }
        metric = performance_metric(meta["task"])
        performance = {"table": "Table 1", "measure": "test_performance", "group": "", "statistic": "value"}
        rows.append({**base, **performance, "value": m["metrics"].get(metric, np.nan)})
        if m.get("kendall") is None:
            continue
        index = {f"class {name}": f"class {i}" for i, name in enumerate(meta["classes"])}
        analysed, test = m["kendall"]["instance_id"].nunique(), int(meta["sizes"]["test"])
        sample = f"{analysed} of {test}" if analysed < test else ""  # analyses.test_sample
        summary = kendall_per_seed(m["kendall"], meta["classes"], nan_policy)
        for r in summary[summary["pair"].isin(list(JW_PAIRS))].itertuples():
            for statistic in ("mean", "std", "sig_frac"):
                rows.append(
                    {
                        **base,
                        "table": "Table 2",
                        "measure": JW_PAIRS[r.pair],
                        "group": index.get(r.group, r.group),
                        "statistic": statistic,
                        "value": getattr(r, statistic),
                        "sample": sample,
                    }
                )
    return pd.DataFrame(rows)


def wp_per_seed(runs: Sequence[Mapping], metas: Mapping[str, Mapping]) -> pd.DataFrame:
    """W&P Table 2: the positive-class test F1 of each base (BiLSTM-tanh, every seed) and uniform run.

    `runs`: dataset, variant ("base" or "uniform"), seed, `metrics` and `config` (dicts)."""
    models = {"base": "lstm-tanh", "uniform": "lstm-uniform"}
    return pd.DataFrame(
        [
            {
                "paper": "wp",
                "table": "Table 2",
                "dataset": r["dataset"],
                "model": models[r["variant"]],
                "seed": int(r["seed"]),
                "measure": "f1_positive",
                "group": "",
                "statistic": "value",
                "value": r["metrics"].get("f1_positive", np.nan),
                **_settings(r["config"], metas.get(r["dataset"], {})),
            }
            for r in runs
        ]
    )


def transformer_size(config: Mapping) -> str:
    """A Transformer run's size as "L layers, H heads, width W" where it differs from the paper's (`AZ_PAPER_SIZE`),
    "" where it is the paper's or its config.yaml does not record it (`az.model`)."""
    model = (config.get("az") or {}).get("model") or {}
    size = {key: model.get(key) for key in AZ_PAPER_SIZE}
    if None in size.values() or size == AZ_PAPER_SIZE:
        return ""
    return f"{size['n_layers']} layers, {size['n_heads']} heads, width {size['width']}"


def correlated_examples(summary: pd.DataFrame) -> str:
    """How many test examples a run's correlations average over where that is not the paper's `AZ_PAPER_EXAMPLES`
    (the most of its first layer's rows: later layers pool the ones below under `az.cumulative_layer_lists`); ""
    where it is the paper's or the summary has no `n`."""
    if "n" not in summary or summary.empty:
        return ""
    examples = int(summary.loc[summary["layer"] == summary["layer"].min(), "n"].max())
    return "" if examples == AZ_PAPER_EXAMPLES else str(examples)


def az_per_seed(runs: Sequence[Mapping], metas: Mapping[str, Mapping] | None = None) -> pd.DataFrame:
    """A&Z Tables 1-2: mean and std over examples of Spearman's ρ per method and layer, from each run's summary.

    `runs`: dataset, seed, `summary` (the frame of correlation_summary.csv), `model` (the Transformer read:
    transformer-self or transformer-tiedcls), `gradient` (the input-gradient measure the run reports; Table 2's
    rows) and optionally `config` (the model's config.yaml as a dict: its size)."""
    rows = []
    for r in runs:
        meta = (metas or {}).get(r["dataset"], {})
        summary, gradient = r["summary"], r.get("gradient", "grad")
        size, examples = transformer_size(r.get("config") or {}), correlated_examples(summary)
        measures = {"blankout": "spearman_blankout", gradient: "spearman_grad"}  # importance -> published measure
        for s in summary[summary["importance"].isin(list(measures))].itertuples():
            for statistic in ("mean", "std"):
                rows.append(
                    {
                        "paper": "az",
                        "table": "Table 1" if s.importance == "blankout" else "Table 2",
                        "dataset": r["dataset"],
                        "model": r.get("model", AZ_PAPER_MODEL),
                        "paper_model": AZ_PAPER_MODEL,
                        "measured_as": "" if s.importance in ("blankout", "grad") else s.importance,
                        "seed": int(r["seed"]),
                        "measure": measures[s.importance],
                        "group": f"{s.method} L{int(s.layer)}",
                        "statistic": statistic,
                        "value": getattr(s, statistic),
                        "embeddings": RANDOM,
                        "vectors": RANDOM,
                        "width": "",
                        "selection": "",
                        "fallback": "" if meta.get("comparable", True) else (meta.get("note") or "a substitute"),
                        "size": size,
                        "examples": examples,
                    }
                )
    return pd.DataFrame(rows)


# --- the comparison ---


GRADIENT_REASONS = {
    "grad_x_input": "input gradient as gradient × input |Σ_d e_jd ∂s/∂e_jd|: the gradient-only form is identically "
    "zero on a pre-LayerNorm Transformer (spec abnar-zuidema.md §4)",
    "grad_l2": "input gradient as its L2 norm ||∂s/∂e_j|| (az.gradient: grad_l2)",
}


def reason(
    paper: str,
    dataset: str,
    n_seeds: int,
    embeddings: set[str],
    selection: set[str],
    fallback: str,
    model: str = "",
    paper_model: str = "",
    measured_as: str = "",
    sample: str = "",
    vectors: set[str] = frozenset(),
    widths: set[str] = frozenset(),
    paper_dataset: str = "",
    size: str = "",
    examples: str = "",
) -> str:
    """Why our setting differs from the paper's, "" where it does not (as far as the run files tell): the reasons
    joined by REASON_SEPARATOR, which none of them contains (the results page numbers them one by one); `sample`:
    "n of N" test instances analysed (`analyses.test_sample`); `vectors`: the runs' vector labels, `widths` their
    embedding widths, compared with the paper's dataset (`paper_dataset`, default `dataset`); a generated substitute
    (its registry `stands_for`) is named as such; A&Z's `size` (`transformer_size`) and `examples`
    (`correlated_examples`): where the Transformer and the examples correlated are not the paper's."""
    reasons = []
    spec = DATASETS.get(dataset)
    stands_for = spec.stands_for if spec is not None else None
    if stands_for and stands_for == (paper_dataset or stands_for):
        about = DATASETS[stands_for].description if stands_for in DATASETS else stands_for
        reasons.append(f"generated data {dataset} instead of the paper's {stands_for}: {about}".replace(REASON_SEPARATOR, ", "))
    elif fallback:
        reasons.append(f"fallback dataset {dataset}: {fallback.replace(REASON_SEPARATOR, ', ')}")
    if paper_model and model != paper_model:
        reasons.append(f"model {model} instead of the paper's {paper_model}")
    if size:
        reasons.append(
            f"a Transformer of {size} (paper: {AZ_PAPER_SIZE['n_layers']} layers, {AZ_PAPER_SIZE['n_heads']} heads, "
            f"width {AZ_PAPER_SIZE['width']})"
        )
    if examples:
        reasons.append(f"correlations over {examples} test examples (paper: {AZ_PAPER_EXAMPLES})")
    if measured_as:
        reasons.append(GRADIENT_REASONS.get(measured_as, f"measured as {measured_as}"))
    paper_vectors = get_dataset(dataset).embeddings if dataset in DATASETS else None
    if paper_vectors and any(e == RANDOM or e.startswith(RANDOM) for e in embeddings):
        reasons.append(f"random instead of pretrained embeddings (paper: {paper_vectors})")
    other = sorted(v for v in vectors if v != RANDOM and not v.endswith("the paper's") and not v.endswith("not recorded)"))
    if paper_vectors and other:
        paper_label = PAPER_VECTORS[paper_vectors].label if paper_vectors in PAPER_VECTORS else paper_vectors
        reasons.append(f"word vectors {' / '.join(other)} instead of the paper's {paper_label}")
    paper_spec = DATASETS.get(paper_dataset or dataset)
    changed = sorted(w for w in widths if w and paper_spec and w != str(paper_spec.embedding_dim))
    if changed:
        reasons.append(f"{'/'.join(changed)}-d word embeddings (paper: {paper_spec.embedding_dim})")
    chosen = PAPER_SELECTION.get(paper)
    others = sorted(s for s in selection if s and chosen and s != chosen)
    if others:
        reasons.append(f"model selected on {'/'.join(others)} (paper: {chosen} set)")
    if n_seeds > 1:
        reasons.append(f"mean of {n_seeds} seeds (paper: one run)")
    if sample:
        reasons.append(f"a seeded sample of {sample} test instances (analyses.test_sample, paper: the whole test set)")
    return REASON_SEPARATOR.join(reasons)


def comparison(per_seed: pd.DataFrame, published: pd.DataFrame, bootstrap_options: Mapping | None = None) -> pd.DataFrame:
    """Ours across seeds joined to the published values (rows both have), with the difference and the reason."""
    if per_seed.empty:
        return pd.DataFrame(columns=COLUMNS)
    names = list(dict.fromkeys(published["dataset"]))
    # our row joins the paper's by paper_dataset (a fallback dataset stands for the paper's) and paper_model (a
    # variant of the paper's model, e.g. transformer-tiedcls, stands for it); both default to ours
    paper_model = per_seed["paper_model"].fillna(per_seed["model"]) if "paper_model" in per_seed else per_seed["model"]
    measured_as = per_seed["measured_as"].fillna("") if "measured_as" in per_seed else ""
    per_seed = per_seed.assign(
        paper_dataset=[paper_dataset(d, names) for d in per_seed["dataset"]],
        paper_model=paper_model,
        measured_as=measured_as,
        **{c: per_seed[c].fillna("") if c in per_seed else "" for c in ("sample", "size", "examples")},
    )
    renamed = {"dataset": "paper_dataset", "model": "paper_model"}
    keys = [renamed.get(k, k) for k in KEYS]
    published = published.rename(columns={**renamed, "value": "published"})
    joined = per_seed.merge(published, on=keys, how="inner")
    joined = joined.assign(  # the word vectors tell rows apart: a dataset's random and pretrained runs are not pooled
        vectors=joined["vectors"].fillna(RANDOM) if "vectors" in joined else RANDOM,
        width=joined["width"].fillna("") if "width" in joined else "",
    )
    rows = []
    for (dataset, model, vector, *key), group in joined.groupby(["dataset", "model", "vectors", *keys], sort=False, dropna=False):
        values = group["value"].astype(float).to_numpy()
        low, high = seed_interval(values, **(bootstrap_options or {}))
        first = group.iloc[0]
        ours = float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "dataset": dataset,
                "model": model,
                "vectors": vector,
                "page": first["page"],
                "source": first["source"],
                "n_seeds": int(group["seed"].nunique()),
                "ours": ours,
                "ci_low": low,
                "ci_high": high,
                "published": float(first["published"]),
                "difference": ours - float(first["published"]),
                "reason": reason(
                    first["paper"],
                    dataset,
                    int(group["seed"].nunique()),
                    set(group["embeddings"]),
                    set(group["selection"]),
                    first["fallback"],
                    model,
                    first["paper_model"],
                    first["measured_as"],
                    first["sample"],
                    {vector},
                    set(group["width"]),
                    first["paper_dataset"],
                    first["size"],
                    first["examples"],
                ),
            }
        )
    table = pd.DataFrame(rows, columns=COLUMNS)
    order = {d: i for i, d in enumerate(dataset_order(list(table["dataset"])))}
    papers = {p: i for i, p in enumerate(PAPER_NAMES)}
    table = table.assign(_p=table["paper"].map(papers), _d=table["dataset"].map(order))
    return table.sort_values(["_p", "table", "_d"], kind="stable").drop(columns=["_p", "_d"]).reset_index(drop=True)


def comparison_display(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Markdown/LaTeX layout: one line per printed number, ours as "mean [low, high]" (n seeds)."""
    columns = ["Paper", "Table", "Dataset", "Model", "Measure", "Group", "Ours", "Published", "Δ", "Vectors", "Settings differ"]
    if table.empty:
        return pd.DataFrame(columns=columns)

    def ours(r) -> str:
        if not np.isfinite(r.ours):
            return "–"
        text = f"{r.ours:.{digits}f}"
        if np.isfinite(r.ci_low):
            text += f" [{r.ci_low:.{digits}f}, {r.ci_high:.{digits}f}]"
        return text + f" (n={r.n_seeds})"

    statistic = {"value": "", "mean": " mean", "std": " std", "sig_frac": " frac. p ≤ 0.05"}
    return pd.DataFrame(
        {
            "Paper": table["paper"].map(PAPER_NAMES),
            "Table": table["table"] + np.where(table["page"].astype(str) != "", ", p. " + table["page"].astype(str), ""),
            "Dataset": table["dataset"],
            "Model": table["model"],
            "Measure": table["measure"].map(MEASURE_NAMES).fillna(table["measure"]) + table["statistic"].map(statistic),
            "Group": table["group"],
            "Ours": [ours(r) for r in table.itertuples()],
            "Published": table["published"].astype(float),
            "Δ": table["difference"].astype(float),
            "Vectors": table["vectors"] if "vectors" in table else RANDOM,
            "Settings differ": table["reason"].where(table["reason"] != "", "–"),
        },
        columns=columns,
    )


# --- entry point for the workflow: paths in, files out ---


def _read_yaml(path: str | Path) -> dict:
    """A run's config.yaml, checked against its sha256 sidecar (`io.read_yaml`)."""
    return read_yaml(path) or {}


def build_paper_comparison(
    *,
    metas: Mapping[str, str | Path],
    jw_models: Sequence[Mapping],
    wp_runs: Sequence[Mapping],
    az_runs: Sequence[Mapping],
    outputs: Mapping[str, str | Path],
    nan_policy: str = "omit",
    bootstrap_options: Mapping | None = None,
) -> pd.DataFrame:
    """paper_comparison.{csv,md,tex} from the run files of the compared datasets.

    `metas`: dataset -> meta.json; `jw_models`: dataset, encoder, attention, seed, metrics, config and (optional)
    kendall paths; `wp_runs`: dataset, variant, seed, metrics, config paths; `az_runs`: dataset, seed, summary and
    (optional) the model's config path.
    Every list may be empty (a grid without the papers' datasets): the table then has its columns and no rows."""
    loaded = {dataset: read_json(path) for dataset, path in metas.items()}
    jw = [
        {
            **m,
            "metrics": read_json(m["metrics"]),
            "config": _read_yaml(m["config"]),
            "kendall": read_parquet(m["kendall"], columns=["instance_id", "predicted", "pair", "tau", "p_value", "is_nan"])
            if m.get("kendall")
            else None,
        }
        for m in jw_models
    ]
    wp = [{**r, "metrics": read_json(r["metrics"]), "config": _read_yaml(r["config"])} for r in wp_runs]
    az = [{**r, "summary": read_csv(r["summary"]), "config": _read_yaml(r["config"]) if r.get("config") else {}} for r in az_runs]
    parts = [p for p in (jw_per_seed(jw, loaded, nan_policy), wp_per_seed(wp, loaded), az_per_seed(az, loaded)) if not p.empty]
    per_seed = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    table = comparison(per_seed, published_values(), bootstrap_options)
    caption = CAPTION + (EMPTY_CAPTION if table.empty else "")
    write_table(table, outputs, caption=caption, display=comparison_display(table))
    return table
