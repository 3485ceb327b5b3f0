"""Tables and figures of the erasure tests (Serrano & Smith 2019; ERASER, DeYoung et al. 2020) across models.

Per dataset x model x ranking: the median fraction of items erased at the first decision flip (over instances that
flip) and the fraction that never flips; AOPC comprehensiveness and sufficiency (per instance the mean over the
bins) with a percentile-bootstrap interval over instances, and with several seeds the mean over seeds with a
bootstrap interval over seeds. Per dataset x model: the single-weight test's flip fractions. Figures per dataset: the
JSD difference histogram, the first-flip boxplots per ranking, the comprehensiveness and sufficiency curves.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from attnexp.analyses.erasure import ATTENTION_GRADIENT, ATTENTION_X_GRADIENT, JW_RANKINGS, RANDOM, RATIONALE
from attnexp.io import read_parquet
from attnexp.report.order import dataset_order
from attnexp.report.tables import mean_with_bootstrap_ci, write_table

INSTANCE_RESAMPLES = 1000  # percentile bootstrap over instances (vectorised; one per dataset x model x ranking)
INSTANCES = (
    "n = test instances per model, summed over seeds: those the model's analyses job analysed (the whole test split, "
    "or a seeded sample of at most analyses.test_sample.n when that is set; rows (A&Z): the az.n_examples sample)."
)
# rankings in display order; the A&Z ones of Transformer-family runs and any other come after, alphabetically
ORDER = (*JW_RANKINGS, ATTENTION_GRADIENT, ATTENTION_X_GRADIENT, RANDOM, RATIONALE)
CAPTIONS = {
    "erasure_summary": (
        "Erasure tests per ranking. Median first flip: median fraction of real items erased from the attention (in "
        "ranked order) when the decision first flips, over instances that flip (lower: the ranking finds the deciding "
        "weights sooner); never: fraction of instances that never flip. Comprehensiveness (higher is better) and "
        "sufficiency (lower is better): AOPC over ERASER's bins, mean over instances with a 95% bootstrap interval "
        "(several seeds: the mean over seeds, the interval over the seeds' means). " + INSTANCES
    ),
    "single_weight": (
        "Serrano & Smith's single-weight test: erase the top attention weight or a random other one. Fractions of instances "
        "where the decision flips for the top weight only, the random one only, both, neither; ΔJSD = JSD(top) − "
        "JSD(random), mean and median. " + INSTANCES
    ),
}


def ranking_order(names: Sequence[str]) -> list[str]:
    known = [r for r in ORDER if r in names]
    return known + sorted(set(names) - set(known))


def instance_interval(values: np.ndarray, confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean over instances (INSTANCE_RESAMPLES draws); NaN below 2 values."""
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    step = max(1, 2**21 // len(values))  # resamples drawn at once: ~16 MiB of indices (IMDB's 25,000 instances)
    means = np.concatenate(
        [
            values[rng.integers(0, len(values), (min(step, INSTANCE_RESAMPLES - start), len(values)))].mean(axis=1)
            for start in range(0, INSTANCE_RESAMPLES, step)
        ]
    )
    alpha = (1 - confidence) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def per_seed_summary(model: Mapping, bootstrap: Mapping | None = None) -> pd.DataFrame:
    """One row per ranking of one model run (`model`: dataset, model, seed and its two erasure files)."""
    options = dict(bootstrap or {})
    confidence, seed = float(options.get("confidence", 0.95)), int(options.get("seed", 0))
    attention, inputs = read_parquet(model["erasure_attention"]), read_parquet(model["erasure_input"])
    aopc = inputs.groupby(["ranking", "instance_id"], sort=False)[["comprehensiveness", "sufficiency"]].mean()
    rows = []
    for ranking in ranking_order(set(attention["ranking"]) | set(inputs["ranking"])):
        flips = attention.loc[(attention["ranking"] == ranking) & (attention["n"] >= 2), "first_flip_fraction"]
        flips = flips.to_numpy(dtype=float)
        row = {
            "dataset": model["dataset"],
            "model": model["model"],
            "seed": int(model["seed"]),
            "ranking": ranking,
            "median_first_flip": float(np.nanmedian(flips)) if np.isfinite(flips).any() else float("nan"),
            "never_flip": float(np.isnan(flips).mean()) if len(flips) else float("nan"),
        }
        for column in ("comprehensiveness", "sufficiency"):
            values = aopc.loc[ranking, column].to_numpy(dtype=float) if ranking in aopc.index.levels[0] else np.array([])
            low, high = instance_interval(values, confidence, seed)
            row |= {column: float(np.nanmean(values)) if len(values) else float("nan"), f"{column}_low": low}
            row[f"{column}_high"] = high
        row["n"] = int(aopc.loc[ranking].shape[0]) if ranking in aopc.index.levels[0] else len(flips)
        rows.append(row)
    return pd.DataFrame(rows)


def erasure_summary(models: Sequence[Mapping], bootstrap: Mapping | None = None) -> pd.DataFrame:
    """Across seeds: the mean of every statistic and n_seeds; `{comprehensiveness,sufficiency}_{low,high}`: the 95%
    bootstrap interval over instances (one seed) or over the seeds' means (several seeds)."""
    per_seed = pd.concat([per_seed_summary(m, bootstrap) for m in models], ignore_index=True)
    means = ["median_first_flip", "never_flip", "comprehensiveness", "sufficiency"]
    intervals = [f"{c}_{end}" for c in ("comprehensiveness", "sufficiency") for end in ("low", "high")]
    keys = ["dataset", "model", "ranking"]
    table = mean_with_bootstrap_ci(per_seed, keys, means + intervals, ["n"], "comprehensiveness", bootstrap)
    over_seeds = mean_with_bootstrap_ci(per_seed, keys, ["sufficiency"], [], "sufficiency", bootstrap)
    several = (table["n_seeds"] > 1).to_numpy()
    for column, seeds in (("comprehensiveness", table), ("sufficiency", over_seeds)):
        for end in ("low", "high"):
            table[f"{column}_{end}"] = np.where(several, seeds[f"ci_{end}"], table[f"{column}_{end}"])
    table = table.drop(columns=["ci_low", "ci_high"])
    order = {d: i for i, d in enumerate(dataset_order(table["dataset"].unique()))}
    return table.sort_values("dataset", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def single_weight_summary(models: Sequence[Mapping]) -> pd.DataFrame:
    """Per dataset and model (seeds pooled): flip fractions of the single-weight test and the JSD difference."""
    rows = []
    for model in models:
        table = read_parquet(model["erasure_attention"])
        table = table[(table["ranking"] == "attention") & table["jsd_top"].notna()]
        rows.append(table.assign(dataset=model["dataset"], model=model["model"], seed=int(model["seed"])))
    pooled = pd.concat(rows, ignore_index=True)
    out = []
    for (dataset, model), group in pooled.groupby(["dataset", "model"], sort=False):
        top, random = group["flip_top"].astype(bool).to_numpy(), group["flip_random"].astype(bool).to_numpy()
        difference = (group["jsd_top"] - group["jsd_random"]).to_numpy(dtype=float)
        out.append(
            {
                "dataset": dataset,
                "model": model,
                "n_seeds": group["seed"].nunique(),
                "flip_top_only": float((top & ~random).mean()),
                "flip_random_only": float((~top & random).mean()),
                "flip_both": float((top & random).mean()),
                "flip_neither": float((~top & ~random).mean()),
                "delta_jsd_mean": float(difference.mean()),
                "delta_jsd_median": float(np.median(difference)),
                "n": len(group),
            }
        )
    return pd.DataFrame(out)


def _interval(mean: float, low: float, high: float) -> str:
    if np.isnan(mean):
        return "–"
    return f"{mean:.3f}" if np.isnan(low) else f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def summary_display(table: pd.DataFrame) -> pd.DataFrame:
    low, high = table["comprehensiveness_low"], table["comprehensiveness_high"]
    return pd.DataFrame(
        {
            "Dataset": table["dataset"],
            "Model": table["model"],
            "Ranking": table["ranking"],
            "Median first flip": table["median_first_flip"],
            "Never flips": table["never_flip"],
            "Comprehensiveness ↑": [_interval(*v) for v in zip(table["comprehensiveness"], low, high, strict=True)],
            "Sufficiency ↓": [
                _interval(*v) for v in zip(table["sufficiency"], table["sufficiency_low"], table["sufficiency_high"], strict=True)
            ],
            "Seeds": table["n_seeds"],  # the counts after the results, so that the results stay on a narrow screen
            "n": table["n"].astype(int),
        }
    )


def write_erasure_tables(*, models: Sequence[Mapping], outputs: Mapping[str, Mapping[str, str]], bootstrap=None) -> None:
    """Both tables in every format; `outputs`: stem -> {csv, md, tex, html}."""
    summary = erasure_summary(models, bootstrap)
    write_table(summary, outputs["erasure_summary"], caption=CAPTIONS["erasure_summary"], display=summary_display(summary))
    single = single_weight_summary(models)
    write_table(single, outputs["single_weight"], caption=CAPTIONS["single_weight"])


# --- figures (one of each per dataset, a panel per model) ---


LEGEND_COLUMN_WIDTH = 1.0  # inches per legend column below the AOPC curves (a ranking name such as "attention_x_gradient")


def _read(models: Sequence[Mapping], key: str) -> pd.DataFrame:
    return pd.concat([read_parquet(m[key]).assign(model=m["model"], seed=int(m["seed"])) for m in models], ignore_index=True)


def _panels(style, count: int, rows: int = 1, height: float = 0.75, **kwargs):
    """A row of `count` panels (per model), `rows` deep: one column width per panel up to 2, then 0.55 of it each;
    each row `height` column widths tall."""
    from attnexp.report.style import new_figure

    width = style.width * max(1.0, 0.55 * count)
    return new_figure(width, rows * height * style.width / width, nrows=rows, ncols=count, squeeze=False, **kwargs)


def ranking_colours(rankings: Sequence[str]) -> dict[str, str]:
    """A fixed colour per ranking (matplotlib's tab10 in display order; random black: the baseline)."""
    from matplotlib import colormaps

    cycle = [colormaps["tab10"](i) for i in range(10)]
    others = [r for r in ranking_order(rankings) if r != RANDOM]
    return {RANDOM: "black", **{r: cycle[i % 10] for i, r in enumerate(others)}}


def figure_title(models: Sequence[Mapping]) -> str:
    """The dataset the figure's models ran on (several, in the report's order, should they differ)."""
    return ", ".join(dataset_order([str(m["dataset"]) for m in models if "dataset" in m]))


def _title(fig, models: Sequence[Mapping]) -> None:
    from attnexp.report.style import set_title

    set_title(fig, figure_title(models))


def single_weight_figure(models: Sequence[Mapping], style):
    """Histogram of JSD(top) − JSD(random) per model (Serrano & Smith Fig. 2); titled with the dataset."""
    table = _read(models, "erasure_attention")
    table = table[(table["ranking"] == "attention") & table["jsd_top"].notna()]
    labels = list(dict.fromkeys(m["model"] for m in models))
    fig, axes = _panels(style, len(labels))
    for ax, label in zip(axes[0], labels, strict=True):
        part = table[table["model"] == label]
        ax.hist((part["jsd_top"] - part["jsd_random"]).to_numpy(dtype=float), bins=30, color=style.colours[0])
        ax.axvline(0.0, color="black", linewidth=0.6)
        ax.set_title(label, fontsize=7)
        ax.set_xlabel("ΔJSD (top − random)")
    axes[0][0].set_ylabel("instances")
    _title(fig, models)
    return fig


def first_flip_figure(models: Sequence[Mapping], style):
    """Boxplots of the first-flip fraction per ranking, one panel per model; the share of instances that never flip
    written at the right; titled with the dataset."""
    table = _read(models, "erasure_attention")
    table = table[table["n"] >= 2]
    labels = list(dict.fromkeys(m["model"] for m in models))
    rankings = ranking_order(table["ranking"].unique())
    fig, axes = _panels(style, len(labels), height=1.1, sharey=True)
    for ax, label in zip(axes[0], labels, strict=True):
        part = table[table["model"] == label]
        values = [part.loc[part["ranking"] == r, "first_flip_fraction"] for r in rankings]
        ax.boxplot(
            [v.dropna().to_numpy() if v.notna().any() else [np.nan] for v in values], orientation="horizontal", showfliers=False
        )
        for position, v in enumerate(values, start=1):
            if len(v):
                never = f"{v.isna().mean():.0%} never"
                ax.text(1.0, position - 0.38, never, ha="right", va="center", fontsize=5, color="0.35")
        ax.set_xlim(0, 1.0)
        ax.set_title(label, fontsize=7)
    fig.supxlabel("fraction of the items erased at the first flip", fontsize=7)
    axes[0][0].set_yticks(range(1, len(rankings) + 1), rankings)
    axes[0][0].tick_params(axis="y", labelsize=5)
    axes[0][0].set_ylim(len(rankings) + 0.6, 0.4)  # the first ranking on top, room for its label
    _title(fig, models)
    return fig


def aopc_figure(models: Sequence[Mapping], style):
    """Comprehensiveness (top row) and sufficiency (bottom row) against k per ranking, one column per model;
    random drawn black and dashed as the baseline; titled with the dataset. One legend below the panels (off the
    curves) names every ranking any panel draws, in display order."""
    table = _read(models, "erasure_input")
    labels = list(dict.fromkeys(m["model"] for m in models))
    fig, axes = _panels(style, len(labels), rows=2)
    rankings = ranking_order(table["ranking"].unique())
    colour = ranking_colours(rankings)
    for column, label in enumerate(labels):
        part = table[table["model"] == label].groupby(["ranking", "k"])[["comprehensiveness", "sufficiency"]].mean()
        bins = sorted(part.index.get_level_values("k").unique())
        for row, quantity in enumerate(("comprehensiveness", "sufficiency")):
            ax = axes[row][column]
            for ranking in rankings:
                if ranking not in part.index.levels[0]:
                    continue
                curve = part.loc[ranking, quantity]
                ax.plot(
                    [bins.index(k) for k in curve.index],  # one step per bin: ERASER's bins are 1% .. 50%
                    curve.to_numpy(),
                    marker="o",
                    markersize=2,
                    color=colour[ranking],
                    linestyle="--" if ranking == RANDOM else "-",
                    label=ranking,
                )
            ax.set_xticks(range(len(bins)), [f"{k:.0%}" for k in bins])
            ax.set_xlabel("k (share of tokens)")
            if column == 0:
                ax.set_ylabel(quantity)
            if row == 0:
                ax.set_title(label, fontsize=7)
    handles = {}  # ranking -> its line, over every panel (a model may lack some rankings)
    for ax in fig.axes:
        lines, names = ax.get_legend_handles_labels()
        handles |= dict(zip(names, lines, strict=True))
    shown = [r for r in rankings if r in handles]
    columns = max(1, min(len(shown), int(fig.get_figwidth() // LEGEND_COLUMN_WIDTH)))
    fig.legend([handles[r] for r in shown], shown, loc="outside lower center", ncol=columns, fontsize=5)
    _title(fig, models)
    return fig


FIGURES = {"single_weight_hist": single_weight_figure, "first_flip": first_flip_figure, "aopc_curves": aopc_figure}
ERASURE_FIGURE_NAMES = tuple(FIGURES)


def write_erasure_figures(*, models: Sequence[Mapping], outputs: Mapping[str, Mapping[str, str | Path]], style) -> None:
    """The figures named in `outputs` (name -> {png, pdf}) of one dataset's models."""
    from attnexp.report.style import paper_style

    with paper_style(style):
        for name, files in outputs.items():
            style.save(FIGURES[name](models, style), files)
