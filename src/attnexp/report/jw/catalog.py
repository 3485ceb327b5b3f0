"""Names of every J&W figure and table, the analysis tables each figure reads, and the titles the HTML report
shows; import-light (no plotting) so the workflow can use it at parse time."""

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

FIGURE_TITLES: dict[str, str] = {
    "tau_hist_attn_grad": "Kendall τ(attention, gradient) histogram",
    "tau_hist_attn_loo": "Kendall τ(attention, LOO) histogram",
    "tau_densities": "Densities of τ for three importance pairs",
    "tau_differences": "Densities of per-instance τ differences",
    "permutation_violin": "Permutation: median output change by max attention",
    "permutation_density": "Permutation: max attention vs median output change",
    "adversary_hist": "Adversarial attention: ε-max JSD histogram",
    "adversary_violin": "Adversarial attention: ε-max JSD by max attention",
    "adversary_examples": "Adversarial attention examples",
    "kendall_bars_gradient": "Mean τ(attention, gradient), BiLSTM vs Average",
    "kendall_bars_loo": "Mean τ(attention, LOO), BiLSTM vs Average",
    "kendall_differences": "τ differences per dataset",
}
TABLE_TITLES: dict[str, str] = {
    "table1_datasets": "Table 1: datasets and test performance",
    "table2_kendall": "Table 2: Kendall τ between attention and importance measures",
    "cross_measure": "Cross-measure τ summary (§6.6)",
    "rationale_recovery": "Planted-rationale recovery",
}
