"""The plan: which jobs a validated config asks for, as the workflow's rules need them, without Snakemake.

`Plan.from_config(config)` decides once which datasets each paper runs on (raw data present, or `data.on_missing`),
lists the runs of J&W, W&P, A&Z and the Hugging Face stage, every target by paper and kind (the named partial
targets of the Snakefile) and the wildcard alternatives (from `models.names`, so a new encoder is never missed).
Paths come from `attnexp.paths`. Import-light: the workflow builds it while it parses.
"""

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnexp import paths
from attnexp.analyses.az import gradient_measure
from attnexp.analyses.wp.settings import ADVERSARY_VARIANT, VARIANTS, AdversarySchedule, WPSettings
from attnexp.datasets import DatasetSpec
from attnexp.datasets.generated.synthetic import FAMILY_FILES
from attnexp.models import names
from attnexp.pipeline import policy
from attnexp.report import catalog
from attnexp.report.catalog import MODEL_FIGURE_TABLES, SUMMARY_FIGURE_NAMES
from attnexp.report.order import dataset_sections
from attnexp.report.published import compared

WP_FIGURE_KINDS = {"seed": "seeds", "adv": "adversary"}  # {kind}_violin / {kind}_scatter: what is compared
PRONOUN_KINDS = ("masked_lm", "prompted")  # the hf.models kinds that read A&Z's pronoun examples (Fig. 4)
PRONOUN_RULE = "az_pronouns"


def alternatives(values: Sequence[str]) -> str:
    """A wildcard constraint matching exactly `values` ("none" matches no path of ours when empty)."""
    return "|".join(map(re.escape, values)) or "none"


def not_drawn_by(tails: set[str], choices: str) -> str:
    """A wildcard constraint: `choices`, unless the rest of the path is one of `tails` (a negative lookahead), so
    that a single-figure rule never matches a figure an aggregate job draws: each figure has one producing rule."""
    if not tails:
        return choices
    excluded = "|".join(re.escape(tail) for tail in sorted(tails))
    return rf"(?!(?:{excluded})\.(?:png|pdf)$)(?:{choices})"


@dataclass(frozen=True)
class Plan:
    """The jobs a validated config asks for. Build it with `Plan.from_config`."""

    config: Mapping = field(repr=False)
    specs: Mapping[str, DatasetSpec] = field(repr=False)  # every dataset the config knows (`policy.datasets_of`)
    datasets: list[str]  # the J&W grid's datasets with data
    az_datasets: list[str]
    wp_datasets: list[str]
    hf_datasets: list[str]
    wp: WPSettings
    basedir: str  # against which a relative `data.raw_data_dir` is resolved (the workflow's: ".", its working directory)

    @classmethod
    def from_config(cls, config: Mapping, basedir: str | Path | None = None) -> "Plan":
        """The plan of a validated config; `basedir` resolves a relative `data.raw_data_dir` (the workflow passes
        ".", so raw paths stay relative to the project). Memoised per config, so that the settings of many jobs share
        one availability check."""
        key = json.dumps(config, default=str)
        if key not in _PLANS:
            _PLANS[key] = {}
        built = _PLANS[key]
        if basedir is None and built:
            return next(iter(built.values()))
        basedir = str(basedir or ".")
        if basedir not in built:
            built[basedir] = _plan(copy.deepcopy(dict(config)), basedir)
        return built[basedir]

    # --- the grid ---

    @property
    def encoders(self) -> list[str]:
        return list(self.config["encoders"])

    @property
    def attentions(self) -> list[str]:
        return list(self.config["attentions"])

    @property
    def seeds(self) -> list[int]:
        return [int(s) for s in self.config["seeds"]]

    def grid_models(self, datasets: Sequence[str] | None = None) -> list[dict]:
        """The grid as label dicts (dataset, encoder, attention, seed), in one fixed order for inputs and settings."""
        return [
            {"dataset": d, "encoder": e, "attention": a, "seed": s}
            for d in (self.datasets if datasets is None else datasets)
            for e in self.encoders
            for a in self.attentions
            for s in self.seeds
        ]

    def hf_table_models(self, analysed: bool = False) -> list[dict]:
        """The Hugging Face runs as models of the J&W tables: encoder `hf`, attention the model's name (so labelled
        `hf-{hf_model}`, as in the erasure tables); `analysed`: only when they run the J&W analyses (`hf.jw_analyses`)."""
        if analysed and not self.config["hf"]["jw_analyses"]:
            return []
        return [{"dataset": d, "encoder": names.HF_ENCODER, "attention": m, "seed": s} for m, d, s in self.hf_runs]

    def table_models(self, kind: str = "model") -> list[dict]:
        """Every model the J&W tables show, in input order: the grid's, then the Hugging Face runs' (kind "analysis":
        those with J&W analyses)."""
        return self.grid_models() + self.hf_table_models(analysed=kind == "analysis")

    def table_model_files(self, model: Mapping, kind: str) -> dict[str, str]:
        """One table model's run files (kind "model") or analysis tables (kind "analysis")."""
        if model["encoder"] == names.HF_ENCODER:
            files = paths.hf_model_files if kind == "model" else paths.hf_analysis_files
            return files(model["attention"], model["dataset"], model["seed"])
        files = paths.model_files if kind == "model" else paths.analysis_files
        return files(model["dataset"], model["encoder"], model["attention"], model["seed"])

    def table_datasets(self) -> list[str]:
        """The datasets of the J&W tables: the grid's, then those only the Hugging Face runs use."""
        return list(dict.fromkeys([*self.datasets, *(d for _, d, _ in self.hf_runs)]))

    def wildcards(self) -> dict[str, str]:
        """The global wildcard constraints."""
        return {
            "dataset": "|".join(sorted(self.specs)),
            "encoder": "|".join([*names.ENCODERS, names.TRANSFORMER_ENCODER]),
            "attention": "|".join([*names.ATTENTIONS, *names.TRANSFORMER_ATTENTIONS]),
            "seed": r"\d+",
            "variant": "|".join(VARIANTS),
            "lam": alternatives(self.wp.lambda_labels(self.wp_datasets)),
            "hf_model": alternatives(self.hf_models),
        }

    @property
    def report_sections(self) -> dict[str, str]:
        """Report subcategory per dataset name (and "All datasets"), in the papers' dataset order."""
        return dataset_sections([*self.datasets, *self.wp_datasets, *self.az_datasets])

    # --- data ---

    def raw_files(self, dataset: str) -> dict[str, str]:
        """Role -> path of the raw files a dataset's preprocessing reads (resolved once, here, for the rule's
        inputs; generated files come from the rule of their family)."""
        return policy.raw_files(policy.spec_of(dataset, self.specs), self.config["data"], self.basedir)

    def raw_dir(self, dataset: str) -> str | None:
        """Where a dataset's raw files lie (their SHA256SUMS too); None for files named in the config."""
        return policy.raw_dir(policy.spec_of(dataset, self.specs), self.config["data"], self.basedir)

    def synthetic_files(self, family: str) -> dict[str, str]:
        """The files one generated family writes (`synthesize_{family}`), by file name."""
        folder = paths.SYNTHETIC.format(family=family)
        return {name: f"{folder}/{name}" for name in FAMILY_FILES[family]}

    def dataset_targets(self) -> list[str]:
        return [paths.preprocessed_files(d)["meta"] for d in self.datasets]

    def vectors_inputs(self, dataset: str) -> dict[str, str]:
        """{"vectors": the word-vector file} of a dataset's classifier runs (J&W and W&P), an input of their jobs so
        that `official` in download mode runs its download rule first; {} for random init or a packaged substitute
        (read from the installed package)."""
        chosen = policy.embeddings(dataset, self.config["data"], self.basedir, self.specs)
        return {"vectors": chosen["path"]} if chosen and chosen["path"] else {}

    def train_inputs(self, dataset: str) -> dict[str, str]:
        """A J&W grid model's inputs: the preprocessed dataset and its word vectors (`vectors_inputs`)."""
        return {**paths.preprocessed_files(dataset), **self.vectors_inputs(dataset)}

    # --- J&W ---

    def model_targets(self) -> list[str]:
        return [paths.model_files(**m)["metrics"] for m in self.grid_models()]

    def analyses_targets(self) -> list[str]:
        return [paths.analysis_files(**m)["kendall_summary"] for m in self.grid_models()]

    def jw_table_targets(self) -> list[str]:
        return [f for stem in catalog.outputs("jw", "table") for f in paths.table_files("jw", stem).values()]

    def jw_figure_targets(self) -> list[str]:
        """Manifests: each stands for the batch job that draws all figures of a dataset (or the summary)."""
        return [paths.figure_manifest("jw", d) for d in [*self.datasets, "summary"]] + self.hf_figure_targets()

    def jw_targets(self) -> list[str]:
        return self.analyses_targets() + self.jw_table_targets() + self.jw_figure_targets()

    def figure_models(self, datasets: Sequence[str] | None = None) -> list[dict]:
        """Models that get per-model figures in the aggregate targets (`figures.models`; "all" = the grid)."""
        chosen = self.config["figures"]["models"]
        return [m for m in self.grid_models(datasets) if "all" in chosen or f"{m['encoder']}-{m['attention']}" in chosen]

    @property
    def model_figure_names(self) -> list[str]:
        return list(self.config["figures"]["per_model"])

    @property
    def summary_figure_names(self) -> list[str]:
        return list(self.config["figures"]["summary"])

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

    def summary_figure_files(self, attention: str | None = None, figure: str | None = None) -> dict:
        """attention -> figure name -> {png, pdf}: the summary batch, or one figure of it."""
        attentions = self.attentions if attention is None else [attention]
        figures = self.summary_figure_names if figure is None else [figure]
        return {a: {n: paths.jw_summary_figure_files(a, n) for n in figures} for a in attentions}

    def single_summary_figure_attention(self) -> str:
        """`attention` of summary_figure: every attention, except for the figures the summary batch draws."""
        tails = {f"{a}/{name}" for a in self.attentions for name in self.summary_figure_names}
        return not_drawn_by(tails, "|".join([*names.ATTENTIONS, *names.TRANSFORMER_ATTENTIONS]))

    def model_figure_alternatives(self) -> str:
        return "|".join(MODEL_FIGURE_TABLES)

    def summary_figure_alternatives(self) -> str:
        return "|".join(SUMMARY_FIGURE_NAMES)

    # --- W&P ---

    def wp_run_files(self, dataset: str, variant: str, seed: int | None = None, lam=None) -> dict[str, str]:
        """One W&P run's files (at the base seed unless `seed` is given)."""
        return paths.wp_run_files(dataset, variant, self.wp.base_seed if seed is None else seed, lam)

    def wp_dataset_runs(self, dataset: str) -> dict:
        """The run files the per-dataset W&P analyses read: base, seeds, uniform, adversaries (sweep order) and J&W's
        per-instance adversary (None when `wp.jw_adversary_runs` is 0)."""
        jw = paths.wp_jw_adversary_file(dataset, self.wp.base_seed) if self.wp.jw_adversary_runs else None
        return {
            "base": self.wp_run_files(dataset, "base"),
            "seeds": [self.wp_run_files(dataset, "base", seed=s) for s in self.wp.seeds],
            "uniform": self.wp_run_files(dataset, "uniform"),
            "adversaries": [self.wp_run_files(dataset, ADVERSARY_VARIANT, lam=x) for x in self.wp.lambdas_for(dataset)],
            "jw_adversary": jw,
        }

    def wp_train_inputs(self, dataset: str, variant: str) -> dict[str, str]:
        """Preprocessed data and its word vectors, plus the donor run's stored attention for the frozen-guide MLPs."""
        inputs = {**paths.preprocessed_files(dataset), **self.vectors_inputs(dataset)}
        if variant == "mlp_base":
            donor = self.wp_run_files(dataset, "base")
        elif variant == "mlp_adv":
            donor = self.wp_run_files(dataset, ADVERSARY_VARIANT, lam=self.wp.diag_lambda_for(dataset))
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
        return [self.wp_run_files(d, variant)["metrics"] for d in self.wp_datasets]

    def wp_diagnostic_metrics(self) -> list[str]:
        return [self.wp_run_files(d, v)["metrics"] for d in self.wp_datasets for v in self.wp.guide_variants()]

    def wp_adversarial_metrics(self) -> list[str]:
        return [
            self.wp_run_files(d, ADVERSARY_VARIANT, lam=x)["metrics"] for d in self.wp_datasets for x in self.wp.lambdas_for(d)
        ]

    @property
    def wp_base_model(self) -> str:
        return f"{'-'.join(VARIANTS['base'])} seed {self.wp.base_seed}"

    def _wp_tables(self, stems: Sequence[str]) -> list[str]:
        return [p for stem in stems for p in paths.table_files("wp", stem).values()]

    def _wp_figures(self, stems: Sequence[str]) -> list[str]:
        return [p for d in self.wp_datasets for s in stems for p in paths.figure_files("wp", f"{d}/{s}").values()]

    def wp_uniform_targets(self) -> list[str]:
        return self._wp_tables(["uniform_table"]) if self.wp_datasets else []

    def wp_seed_targets(self) -> list[str]:
        kinds = ["seed", "adv"] if self.wp.jw_adversary_runs else ["seed"]
        return self._wp_figures([f"{k}_{f}" for k in kinds for f in ("violin", "scatter")])

    def wp_diagnostic_targets(self) -> list[str]:
        return self._wp_tables(["diagnostic_table"]) if self.wp_datasets and self.wp.guides else []

    def wp_adversarial_targets(self) -> list[str]:
        if not self.wp_datasets:
            return []
        points = [f"{d}/jsd_tvd_points" for d in self.wp_datasets]
        return self._wp_tables(["adversarial_table", *points]) + self._wp_figures(["jsd_tvd"])

    def wp_targets(self) -> list[str]:
        return [
            *self.wp_uniform_targets(),
            *self.wp_seed_targets(),
            *self.wp_diagnostic_targets(),
            *self.wp_adversarial_targets(),
        ]

    # --- A&Z and Hugging Face ---

    @property
    def az_seeds(self) -> list[int]:
        return [int(s) for s in self.config["az"]["seeds"]]

    @property
    def az_attention(self) -> str:
        """The Transformer the A&Z analyses read (the J&W analyses always read the tied variant)."""
        tied = self.config["az"]["tied_cls_attention"]
        return names.TRANSFORMER_TIED_ATTENTION if tied else names.TRANSFORMER_ATTENTION

    @property
    def hf_models(self) -> list[str]:
        hf = self.config["hf"]
        return list(hf["models"]) if hf["datasets"] else []

    @property
    def hf_runs(self) -> list[tuple[str, str, int]]:
        seeds = self.config["hf"]["seeds"]
        return [(m, d, int(s)) for m in self.hf_models for d in self.hf_datasets for s in seeds]

    def az_wildcards(self) -> dict[str, str]:
        return {"dataset": alternatives(self.az_datasets), "seed": r"\d+"}

    def hf_wildcards(self) -> dict[str, str]:
        return {"hf_model": alternatives(self.hf_models), "dataset": alternatives(self.hf_datasets), "seed": r"\d+"}

    def az_gradient(self, hf: bool = False) -> str:
        """The input-gradient measure the A&Z tables show (`az.gradient`; "auto": grad_x_input for our pre-LN
        Transformer, grad for a Hugging Face BERT-family model; `analyses.az.gradient_measure`)."""
        return gradient_measure(self.config["az"]["gradient"], shift_invariant=not hf)

    def az_runs(self) -> list[dict]:
        """Every analysed (dataset, seed) with its files, the model read and the gradient measure its tables show;
        Hugging Face runs join as `{dataset}@{hf_model}`."""
        ours = [
            {"dataset": d, "seed": s, "model": f"transformer-{self.az_attention}", "gradient": self.az_gradient()}
            | paths.az_files(d, s)
            for d in self.az_datasets
            for s in self.az_seeds
        ]
        hf = [
            {"dataset": paths.hf_task(m, d), "seed": s, "model": m, "gradient": self.az_gradient(hf=True)}
            | paths.hf_az_files(m, d, s)
            for m, d, s in self.hf_runs
        ]
        return ours + hf

    def az_run_summaries(self) -> list[str]:
        return [run[key] for run in self.az_runs() for key in ("summary", "recovery")]

    def az_table_targets(self) -> list[str]:
        if not self.az_datasets and not self.hf_runs:
            return []
        return [f for stem in catalog.outputs("az", "table") for f in paths.table_files("az", stem).values()]

    def az_figure_targets(self) -> list[str]:
        stems = []
        for stem, entry in catalog.outputs("az", "figure").items():  # per dataset, or per dataset and seed
            if entry.rule == PRONOUN_RULE:  # per language model and example: `pronoun_targets`
                continue
            seeds = self.az_seeds if "{seed}" in stem else [None]
            stems += [stem.format(dataset=d, seed=s) for d in self.az_datasets for s in seeds]
        for m, d, s in self.hf_runs:
            stems.append(paths.hf_figure_stem("cls_maps", m, d, s))
        stems += [paths.hf_figure_stem("correlation_by_layer", m, d) for m in self.hf_models for d in self.hf_datasets]
        return [f for stem in dict.fromkeys(stems) for f in paths.figure_files("az", stem).values()]

    def az_targets(self) -> list[str]:
        if not self.az_datasets:
            return []
        runs = [(d, s) for d in self.az_datasets for s in self.az_seeds]
        tied = names.TRANSFORMER_TIED_ATTENTION
        models = [paths.model_files(d, "transformer", self.az_attention, s)["metrics"] for d, s in runs]
        jw = [paths.analysis_files(d, "transformer", tied, s)["kendall_summary"] for d, s in runs]
        figures = [f for f in self.az_figure_targets() if "/hf/" not in f]
        return [
            *models,
            *(jw if self.config["az"]["jw_analyses"] else []),
            *paths.az_combined_files().values(),
            *self.az_table_targets(),
            *figures,
        ]

    @property
    def pronoun_models(self) -> list[str]:
        """The hf.models entries that read the pronoun examples (A&Z Fig. 4): kind masked_lm or prompted, whether or
        not `hf.datasets` runs the rest of the stage."""
        return [name for name, m in self.config["hf"]["models"].items() if m["kind"] in PRONOUN_KINDS]

    @property
    def pronoun_examples(self) -> list[str]:
        return [example["name"] for example in self.config["az"]["pronoun_examples"]]

    def pronoun_wildcards(self) -> dict[str, str]:
        return {"hf_model": alternatives(self.pronoun_models), "example": alternatives(self.pronoun_examples)}

    def pronoun_targets(self) -> list[str]:
        """A&Z Fig. 4 of every pronoun model and example: PNG, PDF and the table of its numbers."""
        return [
            path for m in self.pronoun_models for e in self.pronoun_examples for path in paths.az_pronoun_files(m, e).values()
        ]

    def pronoun_figure_targets(self) -> list[str]:
        return [p for p in self.pronoun_targets() if p.endswith(tuple(f".{fmt}" for fmt in paths.FIGURE_FORMATS))]

    def hf_targets(self) -> list[str]:
        targets = []
        for m, d, s in self.hf_runs:
            targets += [paths.hf_model_files(m, d, s)["metrics"], paths.hf_az_files(m, d, s)["summary"]]
            if self.config["hf"]["jw_analyses"]:
                targets.append(paths.hf_analysis_files(m, d, s)["kendall_summary"])
        figures = [f for f in self.az_figure_targets() if "/hf/" in f]
        tables = self.az_table_targets() if self.hf_runs else []
        return targets + figures + self.hf_figure_targets() + tables + self.pronoun_targets()

    # --- erasure tests (Serrano & Smith; ERASER): in every analyses job, tables and figures across the models ---

    @property
    def erasure(self) -> bool:
        """`analyses.erasure.enabled`: the analyses jobs also write the erasure tests."""
        return bool(self.config["analyses"]["erasure"]["enabled"])

    def erasure_models(self) -> list[dict]:
        """Every model with erasure tests (none when switched off): the J&W grid, the Transformers' J&W analyses
        (`az.jw_analyses`) and the Hugging Face runs' (`hf.jw_analyses`), then the A&Z jobs' (model label "... (A&Z)",
        the A&Z rankings); dataset, model label, seed and its two files."""
        if not self.erasure:
            return []
        models = [
            {"dataset": m["dataset"], "model": f"{m['encoder']}-{m['attention']}", "seed": m["seed"], **paths.erasure_files(**m)}
            for m in self.grid_models()
        ]
        if self.az_datasets and self.config["az"]["jw_analyses"]:
            tied = names.TRANSFORMER_TIED_ATTENTION
            models += [
                {"dataset": d, "model": f"transformer-{tied}", "seed": s, **paths.erasure_files(d, "transformer", tied, s)}
                for d in self.az_datasets
                for s in self.az_seeds
            ]
        if self.config["hf"]["jw_analyses"]:
            models += [
                {"dataset": d, "model": f"{names.HF_ENCODER}-{m}", "seed": s, **paths.hf_erasure_files(m, d, s)}
                for m, d, s in self.hf_runs
            ]
        az = [  # the A&Z rankings (raw, rollout, flow, blank-out, input gradient) in the A&Z jobs
            {"dataset": d, "model": f"transformer-{self.az_attention} (A&Z)", "seed": s, **paths.az_erasure_files(d, s)}
            for d in self.az_datasets
            for s in self.az_seeds
        ]
        hf = [
            {"dataset": d, "model": f"{names.HF_ENCODER}-{m} (A&Z)", "seed": s, **paths.hf_az_erasure_files(m, d, s)}
            for m, d, s in self.hf_runs
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

    # --- ours beside the published values ---

    def paper_comparison_runs(self) -> dict:
        """The run files behind every published number this grid can match (the comparison's settings)."""
        jw = compared(self.datasets, "jw", self.specs)
        jw_models = [
            {
                **m,
                **{k: paths.model_files(**m)[k] for k in ("metrics", "config")},
                "kendall": paths.analysis_files(**m)["kendall"],
            }
            for m in (self.grid_models(list(jw)) if jw else [])
            if f"{m['encoder']}-{m['attention']}" in jw[m["dataset"]]
        ]
        wp_runs = [
            {
                "dataset": d,
                "variant": v,
                "seed": self.wp.base_seed,
                **{k: self.wp_run_files(d, v)[k] for k in ("metrics", "config")},
            }
            for d in compared(self.wp_datasets, "wp", self.specs)
            for v in ("base", "uniform")
        ]
        az = compared(self.az_datasets, "az", self.specs)
        keys = ("dataset", "seed", "model", "gradient", "summary")
        az_runs = [{k: r[k] for k in keys} for r in self.az_runs() if r["dataset"] in az]
        datasets = sorted({r["dataset"] for r in [*jw_models, *wp_runs, *az_runs]})
        metas = {d: paths.preprocessed_files(d)["meta"] for d in datasets}
        return {"metas": metas, "jw_models": jw_models, "wp_runs": wp_runs, "az_runs": az_runs}

    def paper_comparison_inputs(self) -> list[str]:
        runs = self.paper_comparison_runs()
        files = list(runs["metas"].values())
        for kind, keys in (("jw_models", ("metrics", "config", "kendall")), ("wp_runs", ("metrics", "config"))):
            files += [run[k] for run in runs[kind] for k in keys]
        return files + [run["summary"] for run in runs["az_runs"]]

    def comparison_page_inputs(self) -> dict:
        """The results page's inputs: the comparison CSV, the compared datasets' meta.json and the compared runs'
        config.yaml (the code versions they recorded)."""
        runs = self.paper_comparison_runs()
        configs = [run["config"] for kind in ("jw_models", "wp_runs") for run in runs[kind]]
        return {"table": paths.paper_comparison_files()["csv"], "metas": list(runs["metas"].values()), "configs": configs}

    def comparison_targets(self) -> list[str]:
        return [*paths.paper_comparison_files().values(), *paths.paper_comparison_page_files().values()]

    # --- across papers ---

    def table_targets(self) -> list[str]:
        """Every table of the three papers, the erasure tests and the comparison (CSV, Markdown, LaTeX, HTML)."""
        tables = self.jw_table_targets() + [p for p in self.wp_targets() if p.startswith(paths.TABLES.format(paper="wp"))]
        return tables + self.az_table_targets() + self.erasure_table_targets() + self.comparison_targets()

    def figure_targets(self) -> list[str]:
        """Every figure of the three papers (J&W through the manifests of its batch jobs), Hugging Face's included, and
        of the erasure tests."""
        wp = [p for p in self.wp_targets() if p.startswith(paths.FIGURES.format(paper="wp"))]
        az = self.az_figure_targets() + self.pronoun_figure_targets()
        return self.jw_figure_targets() + wp + az + self.erasure_figure_targets()

    def all_targets(self) -> list[str]:
        targets = [*self.model_targets(), *self.dataset_targets(), *self.analyses_targets()]
        targets += [*self.az_targets(), *self.hf_targets(), *self.wp_targets()]
        return list(dict.fromkeys(targets + self.table_targets() + self.figure_targets()))

    def figure_job(self, job: str, **wildcards) -> Any:
        """What one figure job draws (`FigureSettings.drawn`)."""
        if job == "dataset_figures":
            return self.dataset_figure_models(wildcards["dataset"])
        if job == "model_figure":
            return self.single_model_figure(**wildcards)
        if job == "summary_figures":
            return self.summary_figure_files()
        if job == "summary_figure":
            return self.summary_figure_files(wildcards["attention"], wildcards["summary_figure"])
        if job == "hf_figures":
            return [self.hf_figure_model(wildcards["hf_model"], wildcards["dataset"], int(wildcards["seed"]))]
        if job == "erasure_figures":
            dataset = wildcards["dataset"]
            models = [m for m in self.erasure_models() if m["dataset"] == dataset]
            return {"models": models, "figures": self.erasure_figure_files(dataset)}
        if job == "wp_variance_figures":
            return WP_FIGURE_KINDS[wildcards["kind"]]
        return None


def wp_settings(config: Mapping) -> WPSettings:
    """The W&P stage's settings (`wp`), typed."""
    section = config["wp"]
    return WPSettings(
        datasets=tuple(section["datasets"]),
        base_seed=int(section["base_seed"]),
        seeds=tuple(int(s) for s in section["seeds"]),
        lambdas={key: tuple(values) for key, values in section["lambdas"].items()},
        diag_adv_lambda=dict(section["diag_adv_lambda"]),
        guides=tuple(section["guides"]),
        adversary=AdversarySchedule(**section["adversary"]),
        select_on=section["select_on"],
        preloaded_alignment=section["preloaded_alignment"],
        tvd_binary=section["tvd_binary"],
        adv_loss_class_weight_scaling=bool(section["adv_loss_class_weight_scaling"]),
        report_aggregation=section["report_aggregation"],
        seed_plot_variant=section["seed_plot_variant"],
        jw_adversary_runs=int(section["jw_adversary_runs"]),
        jw_reported=section["jw_reported"],
    )


AZ_OWN_DATASETS = ("syn_agreement",)  # A&Z's task alone: kept when stage lists follow `datasets`


def stage_datasets(config: Mapping, stage: str) -> list[str]:
    """The datasets a stage (wp, hf, az) runs on: its list, narrowed to the J&W grid's `datasets` unless
    `stage_datasets` is as_listed (A&Z's own agreement task is always kept)."""
    listed = list(config[stage]["datasets"])
    if config["stage_datasets"] == "as_listed":
        return listed
    grid = set(config["datasets"]) | (set(AZ_OWN_DATASETS) if stage == "az" else set())
    return [name for name in listed if name in grid]


_PLANS: dict[str, dict[str, Plan]] = {}


def _plan(config: dict, basedir: str) -> Plan:
    data, specs = config["data"], policy.datasets_of(config)

    def available(datasets: Sequence[str], allow_empty: bool = False) -> list[str]:
        return policy.check_datasets_available(list(datasets), data, basedir, allow_empty=allow_empty, specs=specs)

    for stage in ("wp", "hf", "az"):
        config[stage]["datasets"] = stage_datasets(config, stage)
    wp = wp_settings(config)
    az = available(config["az"]["datasets"], allow_empty=True) + (["linzen_agreement"] if config["az"]["linzen_path"] else [])
    hf = config["hf"]
    grid = available(config["datasets"])
    wp_datasets = available(list(wp.datasets)) if wp.datasets else []
    policy.check_vectors(list(dict.fromkeys(grid + wp_datasets)), data, config["hyperparameters"], basedir, specs)
    return Plan(
        config=config,
        specs=specs,
        datasets=grid,
        az_datasets=az,
        wp_datasets=wp_datasets,
        hf_datasets=available(hf["datasets"]) if hf["datasets"] and hf["models"] else [],
        wp=wp,
        basedir=basedir,
    )
