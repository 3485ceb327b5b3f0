"""A&Z's part of the plan: the analysed runs (the Hugging Face runs' too), tables, figures and pronoun examples."""

from attnexp import paths
from attnexp.analyses.az import gradient_measure
from attnexp.models import names
from attnexp.pipeline.plans.core import PlanCore, alternatives
from attnexp.report import catalog

PRONOUN_KINDS = ("masked_lm", "prompted")  # the hf.models kinds that read A&Z's pronoun examples (Fig. 4)
PRONOUN_RULE = "az_pronouns"


class AZPlan:
    """A&Z's runs and targets; the Hugging Face runs join its tables and figures as `{dataset}@{hf_model}`."""

    def __init__(self, core: PlanCore) -> None:
        self.core = core

    def az_wildcards(self) -> dict[str, str]:
        return {"dataset": alternatives(self.core.az_datasets), "seed": r"\d+"}

    def az_gradient(self, hf: bool = False) -> str:
        """The input-gradient measure the A&Z tables show (`az.gradient`; "auto": grad_x_input for our pre-LN
        Transformer, grad for a Hugging Face BERT-family model; `analyses.az.gradient_measure`)."""
        return gradient_measure(self.core.config["az"]["gradient"], shift_invariant=not hf)

    def az_runs(self) -> list[dict]:
        """Every analysed (dataset, seed) with its files, the model read and the gradient measure its tables show;
        Hugging Face runs join as `{dataset}@{hf_model}`."""
        core = self.core
        ours = [
            {"dataset": d, "seed": s, "model": f"transformer-{core.az_attention}", "gradient": self.az_gradient()}
            | paths.az_files(d, s)
            for d in core.az_datasets
            for s in core.az_seeds
        ]
        hf = [
            {"dataset": paths.hf_task(m, d), "seed": s, "model": m, "gradient": self.az_gradient(hf=True)}
            | paths.hf_az_files(m, d, s)
            for m, d, s in core.hf_runs
        ]
        return ours + hf

    def az_run_summaries(self) -> list[str]:
        return [run[key] for run in self.az_runs() for key in ("summary", "recovery")]

    def az_table_targets(self) -> list[str]:
        if not self.core.az_datasets and not self.core.hf_runs:
            return []
        return [f for stem in catalog.outputs("az", "table") for f in paths.table_files("az", stem).values()]

    def az_figure_targets(self) -> list[str]:
        core, stems = self.core, []
        for stem, entry in catalog.outputs("az", "figure").items():  # per dataset, or per dataset and seed
            if entry.rule == PRONOUN_RULE:  # per language model and example: `pronoun_targets`
                continue
            seeds = core.az_seeds if "{seed}" in stem else [None]
            stems += [stem.format(dataset=d, seed=s) for d in core.az_datasets for s in seeds]
        for m, d, s in core.hf_runs:
            stems.append(paths.hf_figure_stem("cls_maps", m, d, s))
        stems += [paths.hf_figure_stem("correlation_by_layer", m, d) for m in core.hf_models for d in core.hf_datasets]
        return [f for stem in dict.fromkeys(stems) for f in paths.figure_files("az", stem).values()]

    def az_targets(self) -> list[str]:
        core = self.core
        if not core.az_datasets:
            return []
        runs = [(d, s) for d in core.az_datasets for s in core.az_seeds]
        tied = names.TRANSFORMER_TIED_ATTENTION
        models = [paths.model_files(d, "transformer", core.az_attention, s)["metrics"] for d, s in runs]
        jw = [paths.analysis_files(d, "transformer", tied, s)["kendall_summary"] for d, s in runs]
        figures = [f for f in self.az_figure_targets() if "/hf/" not in f]
        return [
            *models,
            *(jw if core.config["az"]["jw_analyses"] else []),
            *paths.az_combined_files().values(),
            *self.az_table_targets(),
            *figures,
        ]

    # --- the pronoun examples (A&Z Fig. 4) ---

    @property
    def pronoun_models(self) -> list[str]:
        """The hf.models entries that read the pronoun examples (A&Z Fig. 4): kind masked_lm or prompted, whether or
        not `hf.datasets` runs the rest of the stage."""
        return [name for name, m in self.core.config["hf"]["models"].items() if m["kind"] in PRONOUN_KINDS]

    @property
    def pronoun_examples(self) -> list[str]:
        return [example["name"] for example in self.core.config["az"]["pronoun_examples"]]

    def pronoun_wildcards(self) -> dict[str, str]:
        return {"hf_model": alternatives(self.pronoun_models), "example": alternatives(self.pronoun_examples)}

    def pronoun_targets(self) -> list[str]:
        """A&Z Fig. 4 of every pronoun model and example: PNG, PDF and the table of its numbers."""
        return [
            path for m in self.pronoun_models for e in self.pronoun_examples for path in paths.az_pronoun_files(m, e).values()
        ]

    def pronoun_figure_targets(self) -> list[str]:
        return [p for p in self.pronoun_targets() if p.endswith(tuple(f".{fmt}" for fmt in paths.FIGURE_FORMATS))]
