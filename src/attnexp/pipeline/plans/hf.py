"""The Hugging Face stage's part of the plan: its wildcards and targets (its runs join J&W's and A&Z's)."""

from attnexp import paths
from attnexp.pipeline.plans.az import AZPlan
from attnexp.pipeline.plans.core import PlanCore, alternatives
from attnexp.pipeline.plans.jw import JWPlan


class HFPlan:
    """The Hugging Face runs' targets: their models, A&Z and J&W analyses, figures, tables and pronoun figures."""

    def __init__(self, core: PlanCore, jw: JWPlan, az: AZPlan) -> None:
        self.core, self.jw, self.az = core, jw, az

    def hf_wildcards(self) -> dict[str, str]:
        core = self.core
        return {"hf_model": alternatives(core.hf_models), "dataset": alternatives(core.hf_datasets), "seed": r"\d+"}

    def hf_targets(self) -> list[str]:
        targets = []
        for m, d, s in self.core.hf_runs:
            targets += [paths.hf_model_files(m, d, s)["metrics"], paths.hf_az_files(m, d, s)["summary"]]
            if self.core.config["hf"]["jw_analyses"]:
                targets.append(paths.hf_analysis_files(m, d, s)["kendall_summary"])
        figures = [f for f in self.az.az_figure_targets() if "/hf/" in f]
        tables = self.az.az_table_targets() if self.core.hf_runs else []
        return targets + figures + self.jw.hf_figure_targets() + tables + self.az.pronoun_targets()
