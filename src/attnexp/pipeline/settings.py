"""The settings of every kind of job, built from the plan and its validated config alone.

`attnexp.config.validate_config` fills every default from the schema, so the builders here index the config
(`config["analyses"]["ig_steps"]`) and never fall back to a default of their own: the schema is the one place a
default lives. Each `<Job>Settings.from_plan(plan, **wildcards)` gathers what one kind of job needs from the plan
(`attnexp.pipeline.plan.Plan`, built once by the caller) and the config it carries (`plan.validated`); the rule
hands it to the job as `settings.as_param()` (plain dicts, which Snakemake compares to decide a rerun, so a
changed setting reruns exactly the jobs that read it; shown short in the report, `Param`) and the job gets the
dataclass back (`from_param`).

Import-light (no torch, pandas or matplotlib): the workflow builds these while it plans the jobs.
"""

import copy
import json
import typing
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, is_dataclass, replace
from typing import Any

from attnexp.analyses.az.settings import AZSettings
from attnexp.analyses.erasure.settings import ErasureSettings
from attnexp.analyses.jw.settings import AdversarySettings, AnalysisSettings, TestSample
from attnexp.analyses.wp.settings import ADVERSARY_VARIANT, WPSettings
from attnexp.models import names
from attnexp.models.settings import JW_LEARNING_RATE, JW_WEIGHT_DECAY, Compute, FitSettings, HFSettings
from attnexp.pipeline import policy
from attnexp.pipeline.plan import Plan, wp_settings
from attnexp.report import catalog

Config = Mapping[str, Any]


MINIMAL_GRID = {"datasets": ["syn_sentiment"], "encoders": ["lstm"], "attentions": ["tanh"], "seeds": [0]}


def default_config(**sections) -> dict:
    """A validated config: the smallest grid (MINIMAL_GRID) plus `sections`, every other key at the packaged
    schema's default. The one default config of the API, the benchmarks and the tests."""
    from attnexp.config import validate_config

    return validate_config({**copy.deepcopy(MINIMAL_GRID), **copy.deepcopy(sections)})


class Param(dict):
    """A job's settings as the rule's `params: settings=`: the plain dict the job reads back, and the one Snakemake's
    params rerun trigger records (its `repr`, a dict's). `str` is a short summary (`summary`), which Snakemake prints
    where it shows params as text (the HTML report's "Job parameters", a job's description on the console): the
    fields that list the files or runs a job reads (`JobSettings.unreported`) as their count. Pickled (into a
    script's `snakemake` object) it is a plain dict."""

    def __init__(self, values: Mapping, summary: str) -> None:
        super().__init__(values)
        self.summary = summary

    def __str__(self) -> str:
        return self.summary

    def __reduce__(self):
        return dict, (dict(self),)


def _short(value) -> str:
    """`value` (plain data) as brief text: mappings as {key: value}, sequences as [a, b], no quotes."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key}: {_short(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_short(item) for item in value) + "]"
    return str(value)


def summary(values: Mapping, unreported: tuple[str, ...] = ()) -> str:
    """The short text of a job's settings (`Param`): every field but the empty ones ("", (), None: those a job of
    its kind does not read), and those of `unreported` as their number of entries."""
    parts = []
    for key, value in values.items():
        if value is None or (isinstance(value, str | list | tuple | Mapping) and not value):
            continue
        if key in unreported and hasattr(value, "__len__"):
            shown = f"<{len(value)} {'entry' if len(value) == 1 else 'entries'}>"
        else:
            shown = _short(value)
        parts.append(f"{key}: {shown}")
    return "{" + ", ".join(parts) + "}"


class JobSettings:
    """What every job's settings share: a plain-data form for Snakemake's `params` and the way back.
    `unreported`: the fields the report's "Job parameters" shows as a count (the plan's lists of the files or runs
    the job reads, which are its inputs, other models' included, or the whole config)."""

    unreported: typing.ClassVar[tuple[str, ...]] = ()

    def as_param(self) -> Param:
        values = asdict(self)
        return Param(values, summary(values, self.unreported))

    @classmethod
    def from_param(cls, values: Mapping) -> "JobSettings":
        return _build(cls, values)


def _build(kind, values):
    """`values` (from `asdict`) as an instance of the dataclass `kind`, nested dataclasses included."""
    if not (isinstance(kind, type) and is_dataclass(kind)) or values is None or is_dataclass(values):
        return values
    hints = typing.get_type_hints(kind)
    built = {}
    for field in fields(kind):
        if field.name not in values:
            continue
        hint = hints[field.name]
        options = [a for a in typing.get_args(hint) if a is not type(None)] if typing.get_origin(hint) else [hint]
        built[field.name] = _build(options[0] if len(options) == 1 else None, values[field.name])
    return kind(**built)


def resolved(settings):
    """A copy of domain settings with the configured `device` ("auto", "cuda", ...) resolved on this machine (a
    job resolves it where it runs: a cluster's GPU node, not the submit host)."""
    from attnexp.models.device import resolve_device

    return replace(settings, device=resolve_device(settings.device))


# --- shared blocks ---


def compute_settings(config: Config) -> Compute:
    """How every model computes (top-level keys `device`, as configured: auto | cpu | cuda | cuda:N, resolved where
    `Compute.apply` applies it, and `padded_lstm`); outputs on the CPU do not depend on the device. Training
    (`fit_settings`), the J&W analyses (`analysis_settings`) and the API (`attnexp.api.default_compute`) build it
    here."""
    return Compute(device=config["device"], padded_lstm=config["padded_lstm"])


def declaration(config: Config, dataset: str) -> dict | None:
    """A dataset's `user_datasets` entry (None for a built-in one): how a job's process, which knows only the
    built-in registry, reads its raw files."""
    declared = config["user_datasets"]
    return dict(declared[dataset]) if dataset in declared else None


def hyperparameters(config: Config, dataset: str) -> dict:
    """A dataset's training hyperparameters: its spec's (the registry's, or its `user_datasets` entry's), updated by
    `hyperparameters.<dataset>`."""
    return policy.hyperparameters(dataset, config["hyperparameters"], policy.datasets_of(config))


def fit_settings(config: Config, *, seed: int, paper: str, hyperparameters: Mapping | None = None) -> FitSettings:
    """How `fit` trains one run of `paper`: "jw" and "wp" (the dataset's `hyperparameters`, J&W's Adam; W&P selects
    on `wp.select_on`), "az" (the Transformer, `az.train`) or "hf" (`hf.train` merged into `hyperparameters`)."""
    if paper not in ("jw", "wp", "az", "hf"):
        raise ValueError(f"unknown paper {paper!r}; choose one of jw, wp, az, hf")
    if paper != "az" and hyperparameters is None:
        raise ValueError(f"{paper} runs are trained with the dataset's hyperparameters (epochs, batch_size)")
    sizes = config["az"]["train"] if paper == "az" else hyperparameters
    jw_adam = paper in ("jw", "wp")
    compute = compute_settings(config)
    return FitSettings(
        epochs=sizes["epochs"],
        batch_size=sizes["batch_size"],
        seed=int(seed),
        select_on=config["wp"]["select_on"] if paper == "wp" else config["model_selection"]["split"],
        deterministic=config["seeding"]["deterministic"],
        device=compute.device,
        padded_lstm=compute.padded_lstm and paper != "hf",
        fused_adam=config["fused_adam"],
        learning_rate=JW_LEARNING_RATE if jw_adam else sizes["learning_rate"],
        weight_decay=JW_WEIGHT_DECAY if jw_adam else 0.0,
        amsgrad=sizes["amsgrad"] if paper == "az" else True,
    )


def analysis_settings(config: Config, batch_size: int) -> AnalysisSettings:
    """The J&W analyses' settings (`analyses`); `batch_size` is the model's training batch size (J&W)."""
    section, compute = config["analyses"], compute_settings(config)
    adversary = section["adversary"]
    return AnalysisSettings(
        batch_size=int(batch_size),
        permutations=section["permutations"],
        ig_steps=section["ig_steps"],
        memory_budget_mb=section["memory_budget_mb"],
        bc_loo=section["bc_loo"],
        nan_policy=section["kendall"]["nan_policy"],
        adversary=AdversarySettings(
            candidates=adversary["candidates"],
            steps=adversary["steps"],
            lr=adversary["lr"],
            lam=adversary["lambda"],
            code_thresholds=adversary["code_thresholds"],
        ),
        device=compute.device,
        padded_lstm=compute.padded_lstm,
        test_sample=TestSample(n=section["test_sample"]["n"], seed=section["test_sample"]["seed"]),
    )


def erasure_settings(config: Config) -> ErasureSettings | None:
    """The erasure tests' settings (`analyses.erasure`); None when they are switched off."""
    section = config["analyses"]["erasure"]
    if not section["enabled"]:
        return None
    return ErasureSettings(bins=tuple(float(k) for k in section["bins"]), memory_budget_mb=config["analyses"]["memory_budget_mb"])


def az_settings(config: Config) -> AZSettings:
    """The A&Z analyses' settings: the `az` keys of the same names."""
    return AZSettings(**{field.name: config["az"][field.name] for field in fields(AZSettings)})


def hf_model_options(config: Config, hf_model: str) -> dict:
    """One `hf.models` entry with the section's `max_length` and `train` where the entry does not override them."""
    section = config["hf"]
    if hf_model not in section["models"]:
        from attnexp.errors import ConfigError

        raise ConfigError(f"hf model {hf_model!r} is not in hf.models ({', '.join(section['models'])})")
    model = section["models"][hf_model]
    return {
        "checkpoint": str(model["checkpoint"]),
        "finetune": model["finetune"],
        "max_length": model["max_length"] if "max_length" in model else section["max_length"],
        "train": {**section["train"], **(model["train"] if "train" in model else {})},
    }


def hf_settings(config: Config, hf_model: str) -> HFSettings:
    """One Hugging Face model of `hf.models` with its training options."""
    model = hf_model_options(config, hf_model)
    entry = config["hf"]["models"][hf_model]
    gguf_file = entry["gguf_file"]  # weights, config and tokenizer from a GGUF file
    return HFSettings(
        name=hf_model,
        checkpoint=model["checkpoint"],
        gguf_file=None if gguf_file is None else str(gguf_file),
        kind=entry["kind"],
        prompt=entry["prompt"],
        verbalizer=None if entry["verbalizer"] is None else {str(k): str(v) for k, v in entry["verbalizer"].items()},
        few_shot=tuple((str(shot["text"]), str(shot["label"])) for shot in entry["few_shot"]),
        finetune=bool(model["finetune"]),
        allow_download=bool(config["hf"]["allow_download"]),
        max_length=int(model["max_length"]),
        epochs=int(model["train"]["epochs"]),
        batch_size=int(model["train"]["batch_size"]),
        learning_rate=float(model["train"]["learning_rate"]),
        deterministic=config["seeding"]["deterministic"],
        select_on=config["model_selection"]["split"],
        fused_adam=config["fused_adam"],
    )


@dataclass(frozen=True)
class FigureLook(JobSettings):
    """The house style of every figure (`figures`: palette, width, dpi) and J&W's example keys."""

    palette: str
    width: float
    dpi: int
    examples: int
    example_max_tokens: int

    @classmethod
    def from_config(cls, config: Config) -> "FigureLook":
        return cls(**{field.name: config["figures"][field.name] for field in fields(cls)})

    def style(self):
        """The `report.style.FigureStyle` (matplotlib: built in the job)."""
        from attnexp.report.style import FigureStyle

        return FigureStyle(palette=self.palette, width=self.width, dpi=self.dpi)

    def options(self):
        """The `report.jw.data.FigureOptions`: the style plus J&W's example keys."""
        from attnexp.report.jw.data import FigureOptions

        return FigureOptions(**vars(self))


def bootstrap(config: Config) -> dict:
    """Confidence intervals of the tables (`figures.bootstrap`)."""
    return dict(config["figures"]["bootstrap"])


# --- data ---


@dataclass(frozen=True)
class SynthesizeSettings(JobSettings):
    """One generated family (`synthetic.<family>`; `agreement`: `az.agreement`; `linzen`: the Linzen corpus
    sample, seeded by `az.sample_seed`)."""

    family: str
    seed: int
    options: dict

    @classmethod
    def from_plan(cls, plan: Plan, family: str) -> "SynthesizeSettings":
        config = plan.validated
        if family == "agreement":
            return cls(family, config["az"]["agreement"]["seed"], dict(config["az"]["agreement"]))
        if family == "linzen":
            return cls(family, config["az"]["sample_seed"], {})
        return cls(family, config["synthetic"]["seed"], dict(config["synthetic"][family]))


@dataclass(frozen=True)
class DownloadSettings(JobSettings):
    """One official archive of `attnexp.datasets.acquire.DOWNLOADS`."""

    archive: str

    @classmethod
    def from_plan(cls, plan: Plan, archive: str) -> "DownloadSettings":
        return cls(archive)


@dataclass(frozen=True)
class PreprocessSettings(JobSettings):
    """One dataset's preprocessing (`preprocessing`); `declaration`: its `user_datasets` entry, if declared there
    (a job's process knows only the built-in registry)."""

    dataset: str
    vocab_fit_on: str
    implicit_extremes: bool
    declaration: dict | None
    raw_dir: str | None  # where the raw files lie, for their SHA256SUMS; None: paths named in the config

    @classmethod
    def from_plan(cls, plan: Plan, dataset: str) -> "PreprocessSettings":
        config = plan.validated
        section = config["preprocessing"]
        return cls(
            dataset=dataset,
            vocab_fit_on=section["vocab_fit_on"],
            implicit_extremes=section["implicit_extremes"],
            declaration=declaration(config, dataset),
            raw_dir=plan.raw_dir(dataset),
        )


# --- training ---


def classifier_run(config: Config, dataset: str, seed, paper: str) -> dict:
    """What every J&W-style classifier run (a grid model, a W&P run) is trained with: the dataset's hyperparameters,
    the `model` options, its word vectors and `fit`'s settings."""
    sizes = hyperparameters(config, dataset)
    return {
        "hyperparameters": sizes,
        "model": dict(config["model"]),
        "embeddings": policy.embeddings(dataset, config["data"], specs=policy.datasets_of(config)),
        "fit": fit_settings(config, seed=seed, paper=paper, hyperparameters=sizes),
    }


@dataclass(frozen=True)
class TrainSettings(JobSettings):
    """One J&W model: dataset x encoder x attention x seed, its hyperparameters, `model` options and word vectors."""

    dataset: str
    encoder: str
    attention: str
    seed: int
    hyperparameters: dict
    model: dict
    embeddings: dict
    fit: FitSettings

    @classmethod
    def from_plan(cls, plan: Plan, dataset: str, encoder: str, attention: str, seed) -> "TrainSettings":
        config = plan.validated
        return cls(dataset, encoder, attention, int(seed), **classifier_run(config, dataset, seed, paper="jw"))


@dataclass(frozen=True)
class TransformerSettings(JobSettings):
    """One A&Z Transformer (`az.model`, `az.train`); `attention`: self (standard blocks) or tiedcls."""

    dataset: str
    attention: str
    seed: int
    model: dict
    recipe: str
    patience: int
    fit: FitSettings

    @classmethod
    def from_plan(
        cls, plan: Plan, dataset: str, attention: str, seed, encoder: str = names.TRANSFORMER_ENCODER
    ) -> "TransformerSettings":
        config = plan.validated
        train = config["az"]["train"]
        return cls(
            dataset=dataset,
            attention=attention,
            seed=int(seed),
            model=dict(config["az"]["model"]),
            recipe=train["recipe"],
            patience=train["patience"],
            fit=fit_settings(config, seed=seed, paper="az"),
        )


def wp_of(config: Config, dataset: str) -> WPSettings:
    """The `wp` settings of one dataset's jobs: `datasets` is that dataset alone, so that adding or dropping another
    W&P dataset (or narrowing `datasets`) leaves this one's job parameters, and so its results, as they are."""
    return replace(wp_settings(config), datasets=(dataset,))


@dataclass(frozen=True)
class WPRunSettings(JobSettings):
    """One W&P run: a variant (base, uniform, a diagnostic MLP) or the consistent adversary at one lambda."""

    dataset: str
    variant: str
    seed: int
    lam: float | None
    wp: WPSettings
    hyperparameters: dict
    model: dict
    embeddings: dict
    fit: FitSettings

    @classmethod
    def from_plan(cls, plan: Plan, dataset: str, seed, variant: str = ADVERSARY_VARIANT, lam=None) -> "WPRunSettings":
        config = plan.validated
        lam = None if lam is None else float(lam)
        run = classifier_run(config, dataset, seed, paper="wp")
        return cls(dataset, variant, int(seed), lam, wp_of(config, dataset), **run)


# --- analyses ---


@dataclass(frozen=True)
class AnalyzeSettings(JobSettings):
    """The J&W analyses of one model: its labels (a Hugging Face run: encoder "hf", attention = the model's
    name, no adversary, since its heads share no single attention vector) and `analyses`; `erasure`: the erasure
    tests (None: switched off)."""

    labels: dict
    analysis: AnalysisSettings
    adversary: bool
    erasure: ErasureSettings | None

    @classmethod
    def from_plan(
        cls, plan: Plan, dataset: str, seed, encoder: str | None = None, attention: str | None = None, hf_model=None
    ) -> "AnalyzeSettings":
        """J&W models by `encoder` and `attention`, Hugging Face runs by `hf_model` (the wildcards of each rule)."""
        config = plan.validated
        if hf_model is not None:
            batch_size = hf_model_options(config, hf_model)["train"]["batch_size"]
            encoder, attention = names.HF_ENCODER, hf_model
        else:
            batch_size = hyperparameters(config, dataset)["batch_size"]
        labels = {"dataset": dataset, "encoder": encoder, "attention": attention, "seed": int(seed)}
        return cls(labels, analysis_settings(config, batch_size), hf_model is None, erasure_settings(config))


@dataclass(frozen=True)
class AZAnalysisSettings(JobSettings):
    """The A&Z analyses of one Transformer or Hugging Face run; `task` labels its rows in the tables."""

    dataset: str
    task: str
    seed: int
    az: AZSettings
    device: str
    erasure: ErasureSettings | None  # the erasure tests of the A&Z rankings (None: switched off)
    memory_budget_mb: float  # `analyses.memory_budget_mb`: blank-out's and the input gradients' chunks

    @classmethod
    def from_plan(cls, plan: Plan, dataset: str, seed, hf_model=None) -> "AZAnalysisSettings":
        config = plan.validated
        task = dataset if hf_model is None else f"{dataset}@{hf_model}"
        budget = float(config["analyses"]["memory_budget_mb"])
        return cls(dataset, task, int(seed), az_settings(config), config["device"], erasure_settings(config), budget)


@dataclass(frozen=True)
class WPAnalysisSettings(JobSettings):
    """The W&P analyses of one dataset over its runs (seed and adversary variance, JSD/TVD points, J&W's
    per-instance adversary on the base model). `runs`: the plan's run files of the dataset."""

    unreported: typing.ClassVar[tuple[str, ...]] = ("runs",)

    dataset: str
    wp: WPSettings
    analysis: AnalysisSettings | None  # J&W's `analyses`: only the per-instance adversary's job (the one with a seed)
    runs: dict

    @classmethod
    def from_plan(cls, plan: Plan, dataset: str, seed=None) -> "WPAnalysisSettings":
        config = plan.validated
        batch_size = hyperparameters(config, dataset)["batch_size"]
        analysis = None if seed is None else analysis_settings(config, batch_size)
        return cls(dataset, wp_of(config, dataset), analysis, plan.wp_dataset_runs(dataset))


# --- Hugging Face ---


@dataclass(frozen=True)
class HFRunSettings(JobSettings):
    """One Hugging Face model on one dataset: tokenizing (no seed, no training) or the run of one seed.
    `declaration`: the dataset's `user_datasets` entry, to read its raw files again when tokenizing."""

    dataset: str
    seed: int | None
    hf: HFSettings
    fit: FitSettings | None
    declaration: dict | None

    @classmethod
    def from_plan(cls, plan: Plan, hf_model: str, dataset: str, seed=None) -> "HFRunSettings":
        config = plan.validated
        hf = hf_settings(config, hf_model)
        train = {"epochs": hf.epochs, "batch_size": hf.batch_size, "learning_rate": hf.learning_rate}
        fit = None if seed is None else fit_settings(config, seed=seed, paper="hf", hyperparameters=train)
        return cls(
            dataset=dataset,
            seed=None if seed is None else int(seed),
            hf=hf,
            fit=fit,
            declaration=declaration(config, dataset),
        )


@dataclass(frozen=True)
class PronounSettings(JobSettings):
    """A&Z Fig. 4 of one language model (an `hf.models` entry of kind masked_lm or prompted) and one example of
    `az.pronoun_examples` (name, sentence, candidates, referents); the A&Z rollout and flow options; the figures'
    look."""

    model: str
    kind: str  # masked_lm | prompted (a causal LM)
    checkpoint: str
    gguf_file: str | None
    allow_download: bool
    example: dict
    rollout_residual: bool
    flow_solver: str
    device: str
    look: FigureLook

    @classmethod
    def from_plan(cls, plan: Plan, hf_model: str, example: str) -> "PronounSettings":
        config = plan.validated
        entry = config["hf"]["models"][hf_model]
        (chosen,) = [e for e in config["az"]["pronoun_examples"] if e["name"] == example]
        gguf_file = entry["gguf_file"]
        return cls(
            model=hf_model,
            kind=entry["kind"],
            checkpoint=str(entry["checkpoint"]),
            gguf_file=None if gguf_file is None else str(gguf_file),
            allow_download=bool(config["hf"]["allow_download"]),
            example={
                "name": chosen["name"],
                "sentence": chosen["sentence"],
                "candidates": [str(c) for c in chosen["candidates"]],
                "referents": [str(r) for r in chosen["referents"]],
            },
            rollout_residual=bool(config["az"]["rollout_residual"]),
            flow_solver=config["az"]["flow_solver"],
            device=config["device"],
            look=FigureLook.from_config(config),
        )


# --- tables, figures, the report ---


@dataclass(frozen=True)
class TableSettings(JobSettings):
    """One table job (its `reads` in attnexp.report.catalog): the grid it summarises (`models` in input order), its statistics and
    confidence intervals, and for an aggregate the run files it reads (`runs`: the plan's list its catalog entry
    names, `catalog.runs`)."""

    unreported: typing.ClassVar[tuple[str, ...]] = ("models", "runs")

    table: str
    dataset: str = ""
    datasets: tuple = ()
    models: tuple = ()
    pairs: tuple = ()
    nan_policy: str = ""
    legacy_labels: bool = False
    bootstrap: dict | None = None
    gradients: dict | None = None  # A&Z: task -> the input-gradient measure its rows show
    reported: str | None = None
    runs: list[dict] | dict | None = None  # A&Z's runs, the erasure models (lists), the comparison's runs (a dict)

    @classmethod
    def from_plan(cls, plan: Plan, table: str, dataset: str = "") -> "TableSettings":
        config = plan.validated
        values = {
            "dataset": lambda: dataset,
            "datasets": lambda: tuple(plan.table_datasets()),
            "models": lambda: tuple(plan.table_models("model" if table == "table1" else "analysis")),
            "pairs": lambda: tuple(config["figures"]["table_pairs"]),
            "nan_policy": lambda: config["analyses"]["kendall"]["nan_policy"],
            "legacy_labels": lambda: config["figures"]["legacy_labels"],
            "bootstrap": lambda: bootstrap(config),
            "gradients": lambda: {run["dataset"]: run["gradient"] for run in plan.az_runs()},
            "reported": lambda: config["wp"]["jw_reported"],
            "runs": lambda: getattr(plan, catalog.runs(table))(),
        }
        return cls(table=table, **{key: values[key]() for key in catalog.reads(table)})


@dataclass(frozen=True)
class FigureSettings(JobSettings):
    """One figure job: the house look, a title (the dataset or A&Z task drawn), and what it draws (`drawn`: the
    plan's models of a per-model batch, the summary figures' files, or W&P's compared runs)."""

    unreported: typing.ClassVar[tuple[str, ...]] = ("drawn",)

    look: FigureLook
    title: str
    gradient: str
    datasets: tuple
    drawn: list[dict] | dict | str | None  # `Plan.figure_job`: None for the jobs that draw their inputs alone

    @classmethod
    def from_plan(cls, plan: Plan, job: str, **wildcards) -> "FigureSettings":
        config = plan.validated
        title = wildcards["dataset"] if "dataset" in wildcards else ""
        if "hf_model" in wildcards:
            title = f"{title}@{wildcards['hf_model']}"
        return cls(
            look=FigureLook.from_config(config),
            title=title,
            gradient=plan.az_gradient(hf="hf_model" in wildcards) if job == "az_correlation_figure" else "",
            datasets=tuple(plan.datasets) if job.startswith("summary_figure") else (),
            drawn=plan.figure_job(job, **wildcards),
        )


@dataclass(frozen=True)
class ReportSettings(JobSettings):
    """The HTML report: Snakemake's `--report` over this run's Snakefile and config."""

    unreported: typing.ClassVar[tuple[str, ...]] = ("config",)

    snakefile: str
    config: dict

    @classmethod
    def from_plan(cls, plan: Plan, snakefile: str = "Snakefile") -> "ReportSettings":
        config = plan.validated
        return cls(str(snakefile), json.loads(json.dumps(config)))


def _differing(config: Mapping, defaults: Mapping) -> dict:
    """The keys of `config` whose values differ from `defaults`, nested sections key by key."""
    changes = {}
    for key, value in config.items():
        default = defaults[key] if key in defaults else None
        if isinstance(value, Mapping) and isinstance(default, Mapping) and value and default:
            nested = _differing(value, default)
            if nested:
                changes[key] = nested
        elif key not in defaults or value != default:
            changes[key] = value
    return changes


def config_changes(config: Config) -> dict:
    """`config` (plain data) as far as it differs from the schema's defaults; the grid (MINIMAL_GRID's keys, which
    have no default) always. The schema's defaults are filled without `validate_config`'s other checks."""
    from attnexp.config import schema_problems

    defaults = copy.deepcopy(MINIMAL_GRID)
    schema_problems(defaults)
    plain = json.loads(json.dumps(config))
    grid = {key: plain[key] for key in MINIMAL_GRID}
    return {**grid, **{k: v for k, v in _differing(plain, defaults).items() if k not in grid}}


@dataclass(frozen=True)
class ComparisonPageSettings(JobSettings):
    """The comparison's results page: what made it (the run's config files, `--config` values and whether they
    replace the workflow's config file, its Snakefile, the datasets the grid ran, W&P's and A&Z's
    (`stage_datasets`), the config as it differs from the schema's defaults) and the J&W analyses' section, whose
    test sample the page names. Fixed by the rule:
    `configfiles` and `snakefile` relative to the working directory, so that a moved project does not rerun the
    page; not the whole command line, whose other options (--cores, ...) would rerun it for nothing."""

    unreported: typing.ClassVar[tuple[str, ...]] = ("config_changes", "analyses")

    configfiles: tuple
    config_args: tuple
    replace_workflow_config: bool
    snakefile: str
    datasets: tuple
    config_changes: dict
    analyses: dict
    stage_datasets: dict

    @classmethod
    def from_plan(
        cls,
        plan: Plan,
        snakefile: str = "Snakefile",
        configfiles: tuple = (),
        config_args: tuple = (),
        replace_workflow_config: bool = False,
    ) -> "ComparisonPageSettings":
        config = plan.validated
        return cls(
            configfiles=tuple(str(f) for f in configfiles),
            config_args=tuple(str(a) for a in config_args),
            replace_workflow_config=bool(replace_workflow_config),
            snakefile=str(snakefile),
            datasets=tuple(plan.datasets),
            config_changes=config_changes(config),
            analyses=json.loads(json.dumps(config["analyses"])),
            stage_datasets={"wp": list(plan.wp_datasets), "az": list(plan.az_datasets)},
        )
