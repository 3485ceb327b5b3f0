"""The W&P stage's settings (config section `wp`) and the names of its runs; no torch, so the workflow can import it.

Defaults live in attnexp/config.schema.yaml only: `WPSettings.from_config` reads the validated config.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from attnexp.paths import lambda_label

# variant -> (encoder, attention); "guide" = attention frozen to a donor's weights (W&P §3.3)
VARIANTS = {
    "base": ("lstm", "tanh"),
    "uniform": ("lstm", "uniform"),
    "mlp_uniform": ("average", "uniform"),
    "mlp_trained": ("average", "tanh"),
    "mlp_base": ("average", "guide"),
    "mlp_adv": ("average", "guide"),
}
ADVERSARY_VARIANT = "adversarial"  # the model-consistent adversary (W&P §4), one run per lambda
GUIDE_VARIANTS = {"uniform": "mlp_uniform", "trained": "mlp_trained", "base": "mlp_base", "adversary": "mlp_adv"}
GUIDE_NAMES = {"mlp_uniform": "Uniform", "mlp_trained": "Trained MLP", "mlp_base": "Base LSTM", "mlp_adv": "Adversary"}
GRID_KEYS = ("datasets", "seeds", "lambdas", "diag_adv_lambda")  # what the workflow expands; not part of one run


@dataclass(frozen=True)
class AdversarySchedule:
    """Epoch budget of the model-consistent adversary (config `wp.adversary`)."""

    max_epochs: int
    patience: int


@dataclass(frozen=True)
class WPSettings:
    """Config section `wp`, typed. Field names are the schema's keys."""

    datasets: tuple[str, ...]
    base_seed: int
    seeds: tuple[int, ...]
    lambdas: Mapping[str, tuple[float, ...]]  # dataset (or "default") -> the Test 4 sweep
    diag_adv_lambda: Mapping[str, float]  # dataset (or "default") -> the adversary used as Test 3 guide
    guides: tuple[str, ...]
    adversary: AdversarySchedule
    select_on: str
    preloaded_alignment: str
    tvd_binary: str
    adv_loss_class_weight_scaling: bool
    report_aggregation: str
    seed_plot_variant: str
    jw_adversary_runs: int
    jw_reported: str | None

    def lambdas_for(self, dataset: str) -> list[float]:
        """The lambda sweep of one dataset: its own list, else `default`."""
        return list(self.lambdas.get(dataset, self.lambdas["default"]))

    def diag_lambda_for(self, dataset: str) -> float:
        """The lambda of the adversary whose attention guides the `mlp_adv` run of one dataset."""
        return self.diag_adv_lambda.get(dataset, self.diag_adv_lambda["default"])

    def lambda_labels(self, datasets: Sequence[str]) -> list[str]:
        """Every lambda the runs of `datasets` use (sweeps and Test 3 guides), as path labels (0.001, 1, 10)."""
        values = [x for d in datasets for x in [*self.lambdas_for(d), self.diag_lambda_for(d)]]
        return sorted({lambda_label(x) for x in values})

    def guide_variants(self) -> list[str]:
        """The diagnostic-MLP variants (Test 3) of the configured guides, in config order."""
        return [GUIDE_VARIANTS[guide] for guide in self.guides]

    def run_options(self) -> dict:
        """The `wp` entry of a run's config.yaml: every key except the grid (datasets, seeds, lambdas)."""
        return {
            "base_seed": self.base_seed,
            "guides": list(self.guides),
            "adversary": {"max_epochs": self.adversary.max_epochs, "patience": self.adversary.patience},
            "select_on": self.select_on,
            "preloaded_alignment": self.preloaded_alignment,
            "tvd_binary": self.tvd_binary,
            "adv_loss_class_weight_scaling": self.adv_loss_class_weight_scaling,
            "report_aggregation": self.report_aggregation,
            "seed_plot_variant": self.seed_plot_variant,
            "jw_adversary_runs": self.jw_adversary_runs,
            "jw_reported": self.jw_reported,
        }
