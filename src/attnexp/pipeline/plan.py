"""The plan: which jobs a validated config asks for, as the workflow's rules need them, without Snakemake.

`Plan.from_config(config)` decides once which datasets each paper runs on (raw data present, or `data.on_missing`),
lists the runs of J&W, W&P, A&Z and the Hugging Face stage, every target by paper and kind (the named partial
targets of the Snakefile) and the wildcard alternatives (from `models.names`, so a new encoder is never missed).
`Plan` is the one facade over the parts in `attnexp.pipeline.plans` (one per paper or stage: `plan.jw_plan`,
`plan.wp_plan`, ...); each of its methods is one part's. The workflow builds it once (`PLAN`) and hands it to every
job's settings. Paths come from `attnexp.paths`. Import-light: the workflow builds it while it parses.
"""

from collections.abc import Mapping
from pathlib import Path

from attnexp.pipeline.plans.az import PRONOUN_KINDS, PRONOUN_RULE, AZPlan
from attnexp.pipeline.plans.core import (
    AZ_OWN_DATASETS,
    PlanCore,
    alternatives,
    build_core,
    not_drawn_by,
    stage_datasets,
    wp_settings,
)
from attnexp.pipeline.plans.data import DataPlan
from attnexp.pipeline.plans.erasure import ErasurePlan
from attnexp.pipeline.plans.hf import HFPlan
from attnexp.pipeline.plans.jw import JWPlan
from attnexp.pipeline.plans.report import WP_FIGURE_KINDS, ReportPlan
from attnexp.pipeline.plans.wp import WPPlan

__all__ = [
    "AZ_OWN_DATASETS",
    "PRONOUN_KINDS",
    "PRONOUN_RULE",
    "WP_FIGURE_KINDS",
    "Plan",
    "alternatives",
    "not_drawn_by",
    "stage_datasets",
    "wp_settings",
]


class _Of:
    """A facade attribute: the attribute of the same name of one part (`part`: the facade's attribute holding it)."""

    def __init__(self, part: str, name: str) -> None:
        self.part, self.name = part, name

    def __get__(self, plan: "Plan | None", owner: type | None = None):
        return self if plan is None else getattr(getattr(plan, self.part), self.name)


# part -> the names the facade shows of it (the workflow's, the settings' and the tests' calls)
PARTS = {
    "core": (
        "config", "validated", "datasets", "az_datasets", "wp_datasets", "hf_datasets", "wp", "basedir",
        "encoders", "attentions", "seeds", "grid_models", "hf_models", "hf_runs", "az_seeds", "az_attention",
    ),
    "data_plan": ("raw_files", "raw_dir", "synthetic_files", "dataset_targets", "vectors_inputs", "train_inputs"),
    "jw_plan": (
        "hf_table_models", "table_models", "table_model_files", "table_datasets", "model_targets",
        "analyses_targets", "jw_table_targets", "jw_figure_targets", "jw_targets", "figure_models",
        "model_figure_names", "summary_figure_names", "model_tables", "figure_tables", "model_figure_files",
        "dataset_figure_models", "dataset_figure_inputs", "single_model_figure", "hf_figure_names", "hf_figure_model",
        "hf_figure_targets", "single_model_figure_encoder", "summary_figure_files", "single_summary_figure_attention",
        "model_figure_alternatives", "summary_figure_alternatives",
    ),
    "wp_plan": (
        "wp_run_files", "wp_dataset_runs", "wp_train_inputs", "wp_analysis_inputs", "wp_metrics",
        "wp_diagnostic_metrics", "wp_adversarial_metrics", "wp_base_model", "wp_uniform_targets", "wp_seed_targets",
        "wp_diagnostic_targets", "wp_adversarial_targets", "wp_targets",
    ),
    "az_plan": (
        "az_wildcards", "az_gradient", "az_runs", "az_run_summaries", "az_table_targets", "az_figure_targets",
        "az_targets", "pronoun_models", "pronoun_examples", "pronoun_wildcards", "pronoun_targets",
        "pronoun_figure_targets",
    ),
    "hf_plan": ("hf_wildcards", "hf_targets"),
    "erasure_plan": (
        "erasure", "erasure_models", "erasure_datasets", "erasure_inputs", "erasure_table_targets",
        "erasure_figure_files", "erasure_figure_targets",
    ),
    "report_plan": (
        "wildcards", "report_sections", "paper_comparison_runs", "paper_comparison_inputs", "comparison_page_inputs",
        "comparison_targets", "table_targets", "figure_targets", "all_targets", "figure_job",
    ),
}  # fmt: skip


class Plan:
    """The jobs a validated config asks for: the one facade over the parts of `attnexp.pipeline.plans`. Build it
    with `Plan.from_config`; it carries the validated config (`validated`) that every job's settings read."""

    def __init__(self, core: PlanCore) -> None:
        self.core = core
        self.data_plan = DataPlan(core)
        self.jw_plan = JWPlan(core)
        self.wp_plan = WPPlan(core, self.data_plan)
        self.az_plan = AZPlan(core)
        self.hf_plan = HFPlan(core, self.jw_plan, self.az_plan)
        self.erasure_plan = ErasurePlan(core)
        self.report_plan = ReportPlan(
            core, self.data_plan, self.jw_plan, self.wp_plan, self.az_plan, self.hf_plan, self.erasure_plan
        )

    @classmethod
    def from_config(cls, config: Mapping, basedir: str | Path | None = None) -> "Plan":
        """The plan of a validated config (copied: a later change to `config` leaves the plan as it is); `basedir`
        resolves a relative `data.raw_data_dir` (default and the workflow's: ".", so raw paths stay relative to the
        project)."""
        return cls(build_core(config, str(basedir or ".")))

    def __repr__(self) -> str:
        return f"Plan({self.core!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Plan) and other.core == self.core

    __hash__ = None  # type: ignore[assignment]


for _part, _names in PARTS.items():
    for _name in _names:
        setattr(Plan, _name, _Of(_part, _name))
