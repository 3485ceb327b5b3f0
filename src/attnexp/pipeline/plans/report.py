"""The plan across papers: the comparison with the published values, the targets of every paper, what each figure
job draws and the global wildcard constraints."""

from collections.abc import Callable

from attnexp import paths
from attnexp.analyses.wp.settings import VARIANTS
from attnexp.models import names
from attnexp.pipeline.plans.az import AZPlan
from attnexp.pipeline.plans.core import PlanCore, alternatives
from attnexp.pipeline.plans.data import DataPlan
from attnexp.pipeline.plans.erasure import ErasurePlan
from attnexp.pipeline.plans.hf import HFPlan
from attnexp.pipeline.plans.jw import JWPlan
from attnexp.pipeline.plans.wp import WPPlan
from attnexp.report.order import dataset_sections
from attnexp.report.published import compared

WP_FIGURE_KINDS = {"seed": "seeds", "adv": "adversary"}  # {kind}_violin / {kind}_scatter: what is compared


class ReportPlan:
    """What reads every paper's part: the comparison, the targets across papers, the figure jobs."""

    def __init__(
        self, core: PlanCore, data: DataPlan, jw: JWPlan, wp: WPPlan, az: AZPlan, hf: HFPlan, erasure: ErasurePlan
    ) -> None:
        self.core, self.data, self.jw, self.wp, self.az, self.hf, self.erasure = core, data, jw, wp, az, hf, erasure

    def wildcards(self) -> dict[str, str]:
        """The global wildcard constraints."""
        core = self.core
        return {
            "dataset": "|".join(sorted(core.specs)),
            "encoder": "|".join([*names.ENCODERS, names.TRANSFORMER_ENCODER]),
            "attention": "|".join([*names.ATTENTIONS, *names.TRANSFORMER_ATTENTIONS]),
            "seed": r"\d+",
            "variant": "|".join(VARIANTS),
            "lam": alternatives(core.wp.lambda_labels(core.wp_datasets)),
            "hf_model": alternatives(core.hf_models),
        }

    @property
    def report_sections(self) -> dict[str, str]:
        """Report subcategory per dataset name (and "All datasets"), in the papers' dataset order."""
        core = self.core
        return dataset_sections([*core.datasets, *core.wp_datasets, *core.az_datasets])

    # --- ours beside the published values ---

    def paper_comparison_runs(self) -> dict:
        """The run files behind every published number this grid can match (the comparison's settings)."""
        core = self.core
        jw = compared(core.datasets, "jw", core.specs)
        jw_models = [
            {
                **m,
                **{k: paths.model_files(**m)[k] for k in ("metrics", "config")},
                "kendall": paths.analysis_files(**m)["kendall"],
            }
            for m in (core.grid_models(list(jw)) if jw else [])
            if f"{m['encoder']}-{m['attention']}" in jw[m["dataset"]]
        ]
        wp_runs = [
            {
                "dataset": d,
                "variant": v,
                "seed": core.wp.base_seed,
                **{k: self.wp.wp_run_files(d, v)[k] for k in ("metrics", "config")},
            }
            for d in compared(core.wp_datasets, "wp", core.specs)
            for v in ("base", "uniform")
        ]
        az = compared(core.az_datasets, "az", core.specs)
        keys = ("dataset", "seed", "model", "gradient", "summary")
        az_runs = [
            {
                **{k: r[k] for k in keys},
                "config": paths.model_files(r["dataset"], names.TRANSFORMER_ENCODER, core.az_attention, r["seed"])["config"],
            }
            for r in self.az.az_runs()
            if r["dataset"] in az
        ]
        datasets = sorted({r["dataset"] for r in [*jw_models, *wp_runs, *az_runs]})
        metas = {d: paths.preprocessed_files(d)["meta"] for d in datasets}
        return {"metas": metas, "jw_models": jw_models, "wp_runs": wp_runs, "az_runs": az_runs}

    def paper_comparison_inputs(self) -> list[str]:
        runs = self.paper_comparison_runs()
        files = list(runs["metas"].values())
        for kind, keys in (("jw_models", ("metrics", "config", "kendall")), ("wp_runs", ("metrics", "config"))):
            files += [run[k] for run in runs[kind] for k in keys]
        return files + [run[k] for run in runs["az_runs"] for k in ("summary", "config")]

    def comparison_page_inputs(self) -> dict:
        """The results page's inputs: the comparison CSV, the compared datasets' meta.json and the compared runs'
        config.yaml (the code versions they recorded)."""
        runs = self.paper_comparison_runs()
        configs = [run["config"] for kind in ("jw_models", "wp_runs", "az_runs") for run in runs[kind]]
        return {"table": paths.paper_comparison_files()["csv"], "metas": list(runs["metas"].values()), "configs": configs}

    def comparison_targets(self) -> list[str]:
        return [*paths.paper_comparison_files().values(), *paths.paper_comparison_page_files().values()]

    # --- across papers ---

    def table_targets(self) -> list[str]:
        """Every table of the three papers, the erasure tests and the comparison (CSV, Markdown, LaTeX, HTML)."""
        wp = [p for p in self.wp.wp_targets() if p.startswith(paths.TABLES.format(paper="wp"))]
        tables = self.jw.jw_table_targets() + wp
        return tables + self.az.az_table_targets() + self.erasure.erasure_table_targets() + self.comparison_targets()

    def figure_targets(self) -> list[str]:
        """Every figure of the three papers (J&W through the manifests of its batch jobs), Hugging Face's included, and
        of the erasure tests."""
        wp = [p for p in self.wp.wp_targets() if p.startswith(paths.FIGURES.format(paper="wp"))]
        az = self.az.az_figure_targets() + self.az.pronoun_figure_targets()
        return self.jw.jw_figure_targets() + wp + az + self.erasure.erasure_figure_targets()

    def all_targets(self) -> list[str]:
        targets = [*self.jw.model_targets(), *self.data.dataset_targets(), *self.jw.analyses_targets()]
        targets += [*self.az.az_targets(), *self.hf.hf_targets(), *self.wp.wp_targets()]
        return list(dict.fromkeys(targets + self.table_targets() + self.figure_targets()))

    def figure_job(self, job: str, **wildcards) -> list[dict] | dict | str | None:
        """What one figure job draws (`FigureSettings.drawn`), by job (`FIGURE_JOBS`); None for the jobs that draw
        their inputs alone (A&Z's, the JSD-TVD plane)."""
        drawn = FIGURE_JOBS.get(job)
        return None if drawn is None else drawn(self, **wildcards)

    def _erasure_figures(self, dataset: str) -> dict:
        models = [m for m in self.erasure.erasure_models() if m["dataset"] == dataset]
        return {"models": models, "figures": self.erasure.erasure_figure_files(dataset)}


# figure job -> what it draws, from the plan and the job's wildcards (`ReportPlan.figure_job`)
FIGURE_JOBS: dict[str, Callable[..., list[dict] | dict | str]] = {
    "dataset_figures": lambda plan, dataset: plan.jw.dataset_figure_models(dataset),
    "model_figure": lambda plan, **wildcards: plan.jw.single_model_figure(**wildcards),
    "summary_figures": lambda plan: plan.jw.summary_figure_files(),
    "summary_figure": lambda plan, attention, summary_figure: plan.jw.summary_figure_files(attention, summary_figure),
    "hf_figures": lambda plan, hf_model, dataset, seed: [plan.jw.hf_figure_model(hf_model, dataset, int(seed))],
    "erasure_figures": lambda plan, dataset: plan._erasure_figures(dataset),
    "wp_variance_figures": lambda plan, dataset, kind: WP_FIGURE_KINDS[kind],
}
