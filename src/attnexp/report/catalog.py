"""The one catalog of outputs: every table and figure of the three papers, the erasure tests and the comparison.

An entry names a table or figure once: its paper, its file stem (under `results/tables/{paper}/` or
`results/figures/{paper}/`; `{dataset}`, `{seed}`, `{kind}`, `{hf_model}` and `{example}` are filled per job), its
title in the HTML report, the rule (kind of job) that writes it, the config-derived fields its job reads (so that a
setting reruns only the jobs that show it), its builder, and, for a J&W per-model figure, the analysis tables it draws
from. The plan's targets, the report's titles, the table settings and the table jobs' dispatch all derive from it.

Adding a table: an entry here, its builder `(*, inputs, outputs, settings)` in its paper's report module, its caption
in `workflow/report/{paper}/{stem}.rst`, and the rule that gives it its inputs.

Import-light (no pandas, no plotting): the workflow reads it while it parses; builders import on first call.
"""

import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Output:
    """One table or figure (see the module docstring)."""

    paper: str  # jw, wp, az, erasure, comparison: its folder under results/tables/ or results/figures/
    stem: str
    kind: str  # "table" or "figure"
    title: str
    rule: str
    reads: tuple[str, ...] = ()  # TableSettings fields the rule's job reads besides its input files
    builder: str = ""  # "module:function", called as function(inputs=, outputs=, settings=) (tables)
    tables: tuple[str, ...] = ()  # J&W per-model figures: the analysis tables (and "instances") it reads
    runs: str = ""  # a job that reads "runs": the plan's list of the run files it reads (the name of a `Plan` method)


def _jw_model_figure(stem: str, title: str, *tables: str) -> Output:
    return Output("jw", stem, "figure", title, "dataset_figures", tables=tables)


_JW_TABLES = "attnexp.report.jw.tables"
_WP = "attnexp.report.wp"

CATALOG: tuple[Output, ...] = (
    # --- Jain & Wallace: tables across the grid ---
    Output(
        "jw",
        "table1_datasets",
        "table",
        "Table 1: datasets and test performance",
        "table1",
        ("datasets", "models", "bootstrap"),
        f"{_JW_TABLES}:table1_job",
    ),
    Output(
        "jw",
        "table2_kendall",
        "table",
        "Table 2: Kendall τ between attention and importance measures",
        "table2",
        ("datasets", "models", "pairs", "nan_policy", "bootstrap"),
        f"{_JW_TABLES}:table2_job",
    ),
    Output(
        "jw",
        "cross_measure",
        "table",
        "Cross-measure τ summary (§6.6)",
        "cross_measure_table",
        ("models", "legacy_labels", "bootstrap"),
        f"{_JW_TABLES}:cross_measure_job",
    ),
    Output(
        "jw",
        "rationale_recovery",
        "table",
        "Planted-rationale recovery",
        "rationale_table",
        ("bootstrap",),
        f"{_JW_TABLES}:rationale_job",
    ),
    # --- Jain & Wallace: figures per model (drawn per dataset; any one alone by `model_figure`) ---
    _jw_model_figure("tau_hist_attn_grad", "Kendall τ(attention, gradient) histogram", "kendall"),
    _jw_model_figure("tau_hist_attn_loo", "Kendall τ(attention, LOO) histogram", "kendall"),
    _jw_model_figure("tau_densities", "Densities of τ for three importance pairs", "kendall"),
    _jw_model_figure("tau_differences", "Densities of per-instance τ differences", "kendall"),
    _jw_model_figure("permutation_violin", "Permutation: median output change by max attention", "permutation"),
    _jw_model_figure("permutation_density", "Permutation: max attention vs median output change", "permutation"),
    _jw_model_figure("adversary_hist", "Adversarial attention: ε-max JSD histogram", "adversary"),
    _jw_model_figure("adversary_violin", "Adversarial attention: ε-max JSD by max attention", "adversary"),
    _jw_model_figure("adversary_examples", "Adversarial attention examples", "adversary", "importance", "instances"),
    # --- Jain & Wallace: figures across models, one per attention ---
    Output("jw", "kendall_bars_gradient", "figure", "Mean τ(attention, gradient), BiLSTM vs Average", "summary_figures"),
    Output("jw", "kendall_bars_loo", "figure", "Mean τ(attention, LOO), BiLSTM vs Average", "summary_figures"),
    Output("jw", "kendall_differences", "figure", "τ differences per dataset", "summary_figures"),
    # --- Wiegreffe & Pinter ---
    Output(
        "wp",
        "uniform_table",
        "table",
        "Test 1: uniform attention (Table 2)",
        "wp_uniform_table",
        ("reported",),
        f"{_WP}:uniform_table_job",
    ),
    Output(
        "wp",
        "diagnostic_table",
        "table",
        "Test 3: diagnostic MLP (Table 4)",
        "wp_diagnostic_table",
        (),
        f"{_WP}:diagnostic_table_job",
    ),
    Output(
        "wp",
        "adversarial_table",
        "table",
        "Test 4: consistent adversary",
        "wp_adversarial_table",
        (),
        f"{_WP}:adversarial_table_job",
    ),
    Output(
        "wp",
        "{dataset}/jsd_tvd_points",
        "table",
        "Test 4: JSD and TVD from the base",
        "wp_jsd_tvd_table",
        ("dataset",),
        f"{_WP}:points_table_job",
    ),
    Output("wp", "{dataset}/{kind}_violin", "figure", "Test 2: {kind} variance (violin)", "wp_variance_figures"),
    Output("wp", "{dataset}/{kind}_scatter", "figure", "Test 2: {kind} variance (scatter)", "wp_variance_figures"),
    Output("wp", "{dataset}/jsd_tvd", "figure", "Test 4: JSD-TVD plane (Figure 3)", "wp_jsd_tvd_figure"),
    # --- Abnar & Zuidema (with the Hugging Face runs' rows) ---
    Output("az", "correlations", "table", "Spearman's rho by layer", "az_tables", ("gradients",)),
    Output("az", "subject_recovery", "table", "Subject found by relevance", "az_tables", ("gradients",)),
    Output("az", "importance_recovery", "table", "Subject found by importance", "az_tables", ("gradients",)),
    Output("az", "{dataset}/correlation_by_layer", "figure", "Spearman's rho by layer", "az_correlation_figure"),
    Output("az", "{dataset}/cls_maps_seed{seed}", "figure", "[CLS] maps across layers", "az_cls_maps"),
    # A&Z Fig. 4: per language model (hf.models of kind masked_lm or prompted) and example (az.pronoun_examples)
    Output("az", "pronouns/{hf_model}/{example}", "figure", "Fig. 4: pronoun example {example}", "az_pronouns"),
    # --- the erasure tests ---
    Output(
        "erasure",
        "erasure_summary",
        "table",
        "Erasure: first flip, comprehensiveness, sufficiency per ranking",
        "erasure_tables",
        ("runs", "bootstrap"),
        runs="erasure_models",
    ),
    Output(
        "erasure",
        "single_weight",
        "table",
        "Erasure: the top attention weight against a random one",
        "erasure_tables",
        ("runs", "bootstrap"),
        runs="erasure_models",
    ),
    Output(
        "erasure",
        "{dataset}/single_weight_hist",
        "figure",
        "JSD of erasing the top attention weight minus a random one",
        "erasure_figures",
    ),
    Output(
        "erasure",
        "{dataset}/first_flip",
        "figure",
        "Fraction of items erased at the first decision flip, per ranking",
        "erasure_figures",
    ),
    Output(
        "erasure",
        "{dataset}/aopc_curves",
        "figure",
        "Comprehensiveness and sufficiency over k, per ranking",
        "erasure_figures",
    ),
    # --- ours beside the published values ---
    Output(
        "comparison",
        "paper_comparison",
        "table",
        "Ours beside the published values",
        "paper_comparison",
        ("runs", "nan_policy", "bootstrap"),
        runs="paper_comparison_runs",
    ),
)

# Jobs that aggregate run files without a table of the catalog, what they read (TableSettings fields) and the plan's
# list of their runs (`Output.runs`).
AGGREGATE_READS: dict[str, tuple[str, ...]] = {"az_combine": ("runs",)}
AGGREGATE_RUNS: dict[str, str] = {"az_combine": "az_runs"}


def outputs(paper: str, kind: str) -> dict[str, Output]:
    """stem -> entry of one paper's tables or figures, in catalog order."""
    return {o.stem: o for o in CATALOG if o.paper == paper and o.kind == kind}


def names(paper: str, kind: str) -> dict[str, Output]:
    """name (the stem's last part, without `{dataset}/`) -> entry: how per-dataset outputs are keyed in the jobs."""
    return {o.stem.rsplit("/", 1)[-1]: o for o in outputs(paper, kind).values()}


def titles(paper: str, kind: str) -> dict[str, str]:
    """name -> report title of one paper's tables or figures."""
    return {name: o.title for name, o in names(paper, kind).items()}


def of_rule(rule: str) -> list[Output]:
    return [o for o in CATALOG if o.rule == rule]


def reads(rule: str) -> tuple[str, ...]:
    """The TableSettings fields a table (or aggregate) job reads; the rest stay empty, so that a setting reruns only
    the tables that show it."""
    if rule in AGGREGATE_READS:
        return AGGREGATE_READS[rule]
    found = {o.reads for o in of_rule(rule)}
    if len(found) != 1:
        raise KeyError(f"{rule!r} is not one table job of the catalog (attnexp.report.catalog)")
    return found.pop()


def runs(rule: str) -> str:
    """The plan's list of the run files a job that reads "runs" gets (`Output.runs`: the name of a `Plan` method)."""
    if rule in AGGREGATE_RUNS:
        return AGGREGATE_RUNS[rule]
    found = {o.runs for o in of_rule(rule) if o.runs}
    if len(found) != 1:
        raise KeyError(f"{rule!r} names no single list of runs in the catalog (attnexp.report.catalog)")
    return found.pop()


def builder(rule: str) -> Callable:
    """The function that writes the table of a one-table job, imported on first use."""
    found = [o.builder for o in of_rule(rule) if o.builder]
    if len(found) != 1:
        raise KeyError(f"{rule!r} has no single builder in the catalog (attnexp.report.catalog)")
    module, function = found[0].split(":")
    return getattr(importlib.import_module(module), function)


# J&W per-model figures: name -> the analysis tables it reads; the across-model figures' names.
MODEL_FIGURE_TABLES: dict[str, tuple[str, ...]] = {name: o.tables for name, o in names("jw", "figure").items() if o.tables}
SUMMARY_FIGURE_NAMES: tuple[str, ...] = tuple(o.stem for o in of_rule("summary_figures"))
