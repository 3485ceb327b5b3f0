"""W&P's part of the plan: the runs of each dataset, what its analyses read and its targets."""

from collections.abc import Sequence

from attnexp import paths
from attnexp.analyses.wp.settings import ADVERSARY_VARIANT, VARIANTS
from attnexp.pipeline.plans.core import PlanCore
from attnexp.pipeline.plans.data import DataPlan


class WPPlan:
    """W&P's runs (base, seeds, uniform, the guides' MLPs, the adversaries) and targets."""

    def __init__(self, core: PlanCore, data: DataPlan) -> None:
        self.core, self.data = core, data

    def wp_run_files(self, dataset: str, variant: str, seed: int | None = None, lam=None) -> dict[str, str]:
        """One W&P run's files (at the base seed unless `seed` is given)."""
        return paths.wp_run_files(dataset, variant, self.core.wp.base_seed if seed is None else seed, lam)

    def wp_dataset_runs(self, dataset: str) -> dict:
        """The run files the per-dataset W&P analyses read: base, seeds, uniform, adversaries (sweep order) and J&W's
        per-instance adversary (None when `wp.jw_adversary_runs` is 0)."""
        wp = self.core.wp
        jw = paths.wp_jw_adversary_file(dataset, wp.base_seed) if wp.jw_adversary_runs else None
        return {
            "base": self.wp_run_files(dataset, "base"),
            "seeds": [self.wp_run_files(dataset, "base", seed=s) for s in wp.seeds],
            "uniform": self.wp_run_files(dataset, "uniform"),
            "adversaries": [self.wp_run_files(dataset, ADVERSARY_VARIANT, lam=x) for x in wp.lambdas_for(dataset)],
            "jw_adversary": jw,
        }

    def wp_train_inputs(self, dataset: str, variant: str) -> dict[str, str]:
        """Preprocessed data and its word vectors, plus the donor run's stored attention for the frozen-guide MLPs."""
        inputs = {**paths.preprocessed_files(dataset), **self.data.vectors_inputs(dataset)}
        if variant == "mlp_base":
            donor = self.wp_run_files(dataset, "base")
        elif variant == "mlp_adv":
            donor = self.wp_run_files(dataset, ADVERSARY_VARIANT, lam=self.core.wp.diag_lambda_for(dataset))
        else:
            return inputs
        return {**inputs, **{k: v for k, v in donor.items() if k.endswith("_attention")}}

    def wp_analysis_inputs(self, dataset: str, analysis: str) -> list[str]:
        """The test outputs (and metrics) one per-dataset W&P analysis reads."""
        runs = self.wp_dataset_runs(dataset)
        tests = lambda groups: {g[k] for g in groups for k in ("test_predictions", "test_attention")}  # noqa: E731
        jw = {runs["jw_adversary"]} if runs["jw_adversary"] else set()
        if analysis == "seed_variance":
            return sorted(tests([runs["base"], *runs["seeds"]]))
        if analysis == "adv_variance":
            return sorted(tests([runs["base"]]) | jw)
        groups = [runs["base"], runs["uniform"], *runs["seeds"], *runs["adversaries"]]
        return sorted(tests(groups) | {g["metrics"] for g in groups} | jw)

    def wp_metrics(self, variant: str) -> list[str]:
        """The metrics of one variant's base-seed run on every W&P dataset."""
        return [self.wp_run_files(d, variant)["metrics"] for d in self.core.wp_datasets]

    def wp_diagnostic_metrics(self) -> list[str]:
        return [self.wp_run_files(d, v)["metrics"] for d in self.core.wp_datasets for v in self.core.wp.guide_variants()]

    def wp_adversarial_metrics(self) -> list[str]:
        return [
            self.wp_run_files(d, ADVERSARY_VARIANT, lam=x)["metrics"]
            for d in self.core.wp_datasets
            for x in self.core.wp.lambdas_for(d)
        ]

    @property
    def wp_base_model(self) -> str:
        return f"{'-'.join(VARIANTS['base'])} seed {self.core.wp.base_seed}"

    def _wp_tables(self, stems: Sequence[str]) -> list[str]:
        return [p for stem in stems for p in paths.table_files("wp", stem).values()]

    def _wp_figures(self, stems: Sequence[str]) -> list[str]:
        return [p for d in self.core.wp_datasets for s in stems for p in paths.figure_files("wp", f"{d}/{s}").values()]

    def wp_uniform_targets(self) -> list[str]:
        return self._wp_tables(["uniform_table"]) if self.core.wp_datasets else []

    def wp_seed_targets(self) -> list[str]:
        kinds = ["seed", "adv"] if self.core.wp.jw_adversary_runs else ["seed"]
        return self._wp_figures([f"{k}_{f}" for k in kinds for f in ("violin", "scatter")])

    def wp_diagnostic_targets(self) -> list[str]:
        return self._wp_tables(["diagnostic_table"]) if self.core.wp_datasets and self.core.wp.guides else []

    def wp_adversarial_targets(self) -> list[str]:
        if not self.core.wp_datasets:
            return []
        points = [f"{d}/jsd_tvd_points" for d in self.core.wp_datasets]
        return self._wp_tables(["adversarial_table", *points]) + self._wp_figures(["jsd_tvd"])

    def wp_targets(self) -> list[str]:
        return [
            *self.wp_uniform_targets(),
            *self.wp_seed_targets(),
            *self.wp_diagnostic_targets(),
            *self.wp_adversarial_targets(),
        ]
