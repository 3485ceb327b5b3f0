"""J&W's part of the plan: the grid's models, analyses, tables and figures, the Hugging Face runs' among them."""

from collections.abc import Mapping, Sequence

from attnexp import paths
from attnexp.models import names
from attnexp.pipeline.plans.core import PlanCore, not_drawn_by
from attnexp.report import catalog
from attnexp.report.catalog import MODEL_FIGURE_TABLES, SUMMARY_FIGURE_NAMES


class JWPlan:
    """J&W's jobs and targets; the Hugging Face runs join its tables (encoder `hf`) and per-model figures."""

    def __init__(self, core: PlanCore) -> None:
        self.core = core

    # --- the models of the tables ---

    def hf_table_models(self, analysed: bool = False) -> list[dict]:
        """The Hugging Face runs as models of the J&W tables: encoder `hf`, attention the model's name (so labelled
        `hf-{hf_model}`, as in the erasure tables); `analysed`: only when they run the J&W analyses (`hf.jw_analyses`)."""
        if analysed and not self.core.config["hf"]["jw_analyses"]:
            return []
        return [{"dataset": d, "encoder": names.HF_ENCODER, "attention": m, "seed": s} for m, d, s in self.core.hf_runs]

    def table_models(self, kind: str = "model") -> list[dict]:
        """Every model the J&W tables show, in input order: the grid's, then the Hugging Face runs' (kind "analysis":
        those with J&W analyses)."""
        return self.core.grid_models() + self.hf_table_models(analysed=kind == "analysis")

    def table_model_files(self, model: Mapping, kind: str) -> dict[str, str]:
        """One table model's run files (kind "model") or analysis tables (kind "analysis")."""
        if model["encoder"] == names.HF_ENCODER:
            files = paths.hf_model_files if kind == "model" else paths.hf_analysis_files
            return files(model["attention"], model["dataset"], model["seed"])
        files = paths.model_files if kind == "model" else paths.analysis_files
        return files(model["dataset"], model["encoder"], model["attention"], model["seed"])

    def table_datasets(self) -> list[str]:
        """The datasets of the J&W tables: the grid's, then those only the Hugging Face runs use."""
        return list(dict.fromkeys([*self.core.datasets, *(d for _, d, _ in self.core.hf_runs)]))

    # --- targets ---

    def model_targets(self) -> list[str]:
        return [paths.model_files(**m)["metrics"] for m in self.core.grid_models()]

    def analyses_targets(self) -> list[str]:
        return [paths.analysis_files(**m)["kendall_summary"] for m in self.core.grid_models()]

    def jw_table_targets(self) -> list[str]:
        return [f for stem in catalog.outputs("jw", "table") for f in paths.table_files("jw", stem).values()]

    def jw_figure_targets(self) -> list[str]:
        """Manifests: each stands for the batch job that draws all figures of a dataset (or the summary)."""
        return [paths.figure_manifest("jw", d) for d in [*self.core.datasets, "summary"]] + self.hf_figure_targets()

    def jw_targets(self) -> list[str]:
        return self.analyses_targets() + self.jw_table_targets() + self.jw_figure_targets()

    # --- per-model figures ---

    def figure_models(self, datasets: Sequence[str] | None = None) -> list[dict]:
        """Models that get per-model figures in the aggregate targets (`figures.models`; "all" = the grid)."""
        chosen = self.core.config["figures"]["models"]
        return [m for m in self.core.grid_models(datasets) if "all" in chosen or f"{m['encoder']}-{m['attention']}" in chosen]

    @property
    def model_figure_names(self) -> list[str]:
        return list(self.core.config["figures"]["per_model"])

    @property
    def summary_figure_names(self) -> list[str]:
        return list(self.core.config["figures"]["summary"])

    def model_tables(self, model: Mapping, tables: Sequence[str]) -> dict[str, str]:
        """Paths of the analysis tables `tables` of one model of the tables (`instances`: the preprocessed instances;
        a Hugging Face run's: those its tokenizer made)."""
        files = self.table_model_files(model, "analysis")
        found = {t: files[t] for t in tables if t != "instances"}
        if "instances" in tables:
            hf = model["encoder"] == names.HF_ENCODER
            data = paths.hf_preprocessed_files(model["attention"], model["dataset"]) if hf else None
            found["instances"] = (data or paths.preprocessed_files(model["dataset"]))["instances"]
        return found

    def figure_tables(self, names_: Sequence[str]) -> list[str]:
        return sorted({t for name in names_ for t in MODEL_FIGURE_TABLES[name]})

    def model_figure_files(self, model: Mapping, name: str) -> dict[str, str]:
        return paths.jw_model_figure_files(model["dataset"], model["encoder"], model["attention"], model["seed"], name)

    def dataset_figure_models(self, dataset: str) -> list[dict]:
        """The per-dataset batch: each figure model's labels, analysis tables and figure files."""
        tables = self.figure_tables(self.model_figure_names)
        return [
            {
                **m,
                **self.model_tables(m, tables),
                "figures": {name: self.model_figure_files(m, name) for name in self.model_figure_names},
            }
            for m in self.figure_models([dataset])
        ]

    def dataset_figure_inputs(self, dataset: str) -> list[str]:
        tables = self.figure_tables(self.model_figure_names)
        return sorted({p for m in self.figure_models([dataset]) for p in self.model_tables(m, tables).values()})

    def single_model_figure(self, dataset: str, encoder: str, attention: str, seed, figure: str) -> list[dict]:
        """One figure drawn alone (`model_figure`), as a batch of one model."""
        model = {"dataset": dataset, "encoder": encoder, "attention": attention, "seed": int(seed)}
        tables = self.model_tables(model, MODEL_FIGURE_TABLES[figure])
        return [{**model, **tables, "figures": {figure: self.model_figure_files(model, figure)}}]

    @property
    def hf_figure_names(self) -> list[str]:
        """The per-model J&W figures of a Hugging Face run: those of `figures.per_model` but the adversary's (a
        multi-head model has no single attention vector for the adversary to replace; its captions say so)."""
        return [name for name in self.model_figure_names if "adversary" not in MODEL_FIGURE_TABLES[name]]

    def hf_figure_model(self, hf_model: str, dataset: str, seed) -> dict:
        """One Hugging Face run's per-model J&W figures, as a batch of one model (labels, tables, figure files)."""
        model = {"dataset": dataset, "encoder": names.HF_ENCODER, "attention": hf_model, "seed": seed}
        figures = {name: self.model_figure_files(model, name) for name in self.hf_figure_names}
        return {**model, **self.model_tables(model, self.figure_tables(self.hf_figure_names)), "figures": figures}

    def hf_figure_targets(self) -> list[str]:
        return [
            path
            for m in self.hf_table_models(analysed=True)
            for files in self.hf_figure_model(m["attention"], m["dataset"], m["seed"])["figures"].values()
            for path in files.values()
        ]

    def single_model_figure_encoder(self) -> str:
        """`encoder` of model_figure: every encoder, except for the figures a dataset_figures job draws."""
        tails = {
            f"{m['encoder']}-{m['attention']}/seed{m['seed']}/{name}"
            for m in self.figure_models(["{dataset}"])
            for name in self.model_figure_names
        }
        return not_drawn_by(tails, "|".join([*names.ENCODERS, names.TRANSFORMER_ENCODER]))

    # --- summary figures ---

    def summary_figure_files(self, attention: str | None = None, figure: str | None = None) -> dict:
        """attention -> figure name -> {png, pdf}: the summary batch, or one figure of it."""
        attentions = self.core.attentions if attention is None else [attention]
        figures = self.summary_figure_names if figure is None else [figure]
        return {a: {n: paths.jw_summary_figure_files(a, n) for n in figures} for a in attentions}

    def single_summary_figure_attention(self) -> str:
        """`attention` of summary_figure: every attention, except for the figures the summary batch draws."""
        tails = {f"{a}/{name}" for a in self.core.attentions for name in self.summary_figure_names}
        return not_drawn_by(tails, "|".join([*names.ATTENTIONS, *names.TRANSFORMER_ATTENTIONS]))

    def model_figure_alternatives(self) -> str:
        return "|".join(MODEL_FIGURE_TABLES)

    def summary_figure_alternatives(self) -> str:
        return "|".join(SUMMARY_FIGURE_NAMES)
