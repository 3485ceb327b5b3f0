"""The erasure tests' part of the plan (Serrano & Smith; ERASER): in every analyses job, tables and figures across
the models."""

from attnexp import paths
from attnexp.models import names
from attnexp.pipeline.plans.core import PlanCore
from attnexp.report import catalog


class ErasurePlan:
    """The models with erasure tests and the erasure tables and figures."""

    def __init__(self, core: PlanCore) -> None:
        self.core = core

    @property
    def erasure(self) -> bool:
        """`analyses.erasure.enabled`: the analyses jobs also write the erasure tests."""
        return bool(self.core.config["analyses"]["erasure"]["enabled"])

    def erasure_models(self) -> list[dict]:
        """Every model with erasure tests (none when switched off): the J&W grid, the Transformers' J&W analyses
        (`az.jw_analyses`) and the Hugging Face runs' (`hf.jw_analyses`), then the A&Z jobs' (model label "... (A&Z)",
        the A&Z rankings); dataset, model label, seed and its two files."""
        if not self.erasure:
            return []
        core, config = self.core, self.core.config
        models = [
            {"dataset": m["dataset"], "model": f"{m['encoder']}-{m['attention']}", "seed": m["seed"], **paths.erasure_files(**m)}
            for m in core.grid_models()
        ]
        if core.az_datasets and config["az"]["jw_analyses"]:
            tied = names.TRANSFORMER_TIED_ATTENTION
            models += [
                {"dataset": d, "model": f"transformer-{tied}", "seed": s, **paths.erasure_files(d, "transformer", tied, s)}
                for d in core.az_datasets
                for s in core.az_seeds
            ]
        if config["hf"]["jw_analyses"]:
            models += [
                {"dataset": d, "model": f"{names.HF_ENCODER}-{m}", "seed": s, **paths.hf_erasure_files(m, d, s)}
                for m, d, s in core.hf_runs
            ]
        az = [  # the A&Z rankings (raw, rollout, flow, blank-out, input gradient) in the A&Z jobs
            {"dataset": d, "model": f"transformer-{core.az_attention} (A&Z)", "seed": s, **paths.az_erasure_files(d, s)}
            for d in core.az_datasets
            for s in core.az_seeds
        ]
        hf = [
            {"dataset": d, "model": f"{names.HF_ENCODER}-{m} (A&Z)", "seed": s, **paths.hf_az_erasure_files(m, d, s)}
            for m, d, s in core.hf_runs
        ]
        return models + az + hf

    def erasure_datasets(self) -> list[str]:
        return list(dict.fromkeys(m["dataset"] for m in self.erasure_models()))

    def erasure_inputs(self, dataset: str | None = None) -> list[str]:
        """The erasure files of every model (of `dataset`)."""
        chosen = [m for m in self.erasure_models() if dataset is None or m["dataset"] == dataset]
        return [m[key] for m in chosen for key in paths.ERASURE_FILES]

    def erasure_table_targets(self) -> list[str]:
        if not self.erasure_models():
            return []
        return [f for stem in catalog.outputs(paths.ERASURE, "table") for f in paths.table_files(paths.ERASURE, stem).values()]

    def erasure_figure_files(self, dataset: str = "{dataset}") -> dict[str, dict[str, str]]:
        """figure name -> {png, pdf} of one dataset's erasure figures."""
        return {name: paths.figure_files(paths.ERASURE, f"{dataset}/{name}") for name in catalog.names(paths.ERASURE, "figure")}

    def erasure_figure_targets(self) -> list[str]:
        return [f for d in self.erasure_datasets() for files in self.erasure_figure_files(d).values() for f in files.values()]
