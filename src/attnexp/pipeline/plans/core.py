"""What every part of the plan reads: the validated config, the datasets of each paper and the runs they imply."""

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from attnexp.analyses.wp.settings import AdversarySchedule, WPSettings
from attnexp.datasets import DatasetSpec
from attnexp.models import names
from attnexp.pipeline import policy

AZ_OWN_DATASETS = ("syn_agreement",)  # A&Z's task alone: kept when stage lists follow `datasets`


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
class PlanCore:
    """The datasets each paper runs on (raw data present, or `data.on_missing`) and the config they came from.
    `config`: stage dataset lists narrowed (`stage_datasets`), what the parts read; `validated`: the config as
    validated, what the job settings read."""

    config: Mapping = field(repr=False)
    validated: Mapping = field(repr=False)
    specs: Mapping[str, DatasetSpec] = field(repr=False)  # every dataset the config knows (`policy.datasets_of`)
    datasets: list[str]  # the J&W grid's datasets with data
    az_datasets: list[str]
    wp_datasets: list[str]
    hf_datasets: list[str]
    wp: WPSettings
    basedir: str  # against which a relative `data.raw_data_dir` is resolved (the workflow's: ".", its working directory)

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

    @property
    def hf_models(self) -> list[str]:
        hf = self.config["hf"]
        return list(hf["models"]) if hf["datasets"] else []

    @property
    def hf_runs(self) -> list[tuple[str, str, int]]:
        seeds = self.config["hf"]["seeds"]
        return [(m, d, int(s)) for m in self.hf_models for d in self.hf_datasets for s in seeds]

    @property
    def az_seeds(self) -> list[int]:
        return [int(s) for s in self.config["az"]["seeds"]]

    @property
    def az_attention(self) -> str:
        """The Transformer the A&Z analyses read (the J&W analyses always read the tied variant)."""
        tied = self.config["az"]["tied_cls_attention"]
        return names.TRANSFORMER_TIED_ATTENTION if tied else names.TRANSFORMER_ATTENTION


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


def stage_datasets(config: Mapping, stage: str) -> list[str]:
    """The datasets a stage (wp, hf, az) runs on: its list, narrowed to the J&W grid's `datasets` unless
    `stage_datasets` is as_listed (A&Z's own agreement task is always kept)."""
    listed = list(config[stage]["datasets"])
    if config["stage_datasets"] == "as_listed":
        return listed
    grid = set(config["datasets"]) | (set(AZ_OWN_DATASETS) if stage == "az" else set())
    return [name for name in listed if name in grid]


def build_core(validated: Mapping, basedir: str) -> PlanCore:
    """Check which datasets have their data (and word vectors) and narrow the stage lists; copies `validated`."""
    config = copy.deepcopy(dict(validated))
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
    return PlanCore(
        config=config,
        validated=copy.deepcopy(dict(validated)),
        specs=specs,
        datasets=grid,
        az_datasets=az,
        wp_datasets=wp_datasets,
        hf_datasets=available(hf["datasets"]) if hf["datasets"] and hf["models"] else [],
        wp=wp,
        basedir=basedir,
    )
