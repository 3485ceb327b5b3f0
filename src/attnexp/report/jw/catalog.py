"""Names of every figure and the analysis tables each reads; import-light so the Snakefile can use it."""

MODEL_FIGURE_TABLES: dict[str, tuple[str, ...]] = {
    "tau_hist_attn_grad": ("kendall",),
    "tau_hist_attn_loo": ("kendall",),
    "tau_densities": ("kendall",),
    "tau_differences": ("kendall",),
    "permutation_violin": ("permutation",),
    "permutation_density": ("permutation",),
    "adversary_hist": ("adversary",),
    "adversary_violin": ("adversary",),
    "adversary_examples": ("adversary", "importance", "instances"),
}
SUMMARY_FIGURE_NAMES: tuple[str, ...] = ("kendall_bars_gradient", "kendall_bars_loo", "kendall_differences")
ANALYSIS_TABLES = ("importance", "kendall", "permutation", "adversary")
