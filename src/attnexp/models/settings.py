"""Training and model selection: ONE loop, `fit`, for every model of the project.

`fit` trains on the train split in J&W's length-noise batches (§5) with Adam (one per parameter group for
BC), asks an objective for each batch's loss and each epoch's selection score, keeps the best epoch's
weights and reports test metrics. The objectives:
  - `Classification` (J&W §5): class-weighted BCE summed over the batch (BC) or mean cross-entropy (QA/NLI);
    keep the epoch with the best ROC-AUC (BC) or accuracy (QA/NLI) on `select_on`: never epoch 0 (J&W),
    from the first epoch on for W&P runs (`first_epoch_eligible`); no epoch kept: keep the last;
  - `CrossEntropy` (A&Z spec §2.1, the Transformer's default `az.train.recipe: spec`): unweighted mean
    cross-entropy, keep the epoch with the best accuracy on `select_on` (epoch 0 included), early stopping
    after `patience` epochs without improvement; `az.train.recipe: jw` trains the Transformer with
    `Classification()` instead (the recipe of earlier runs);
  - W&P's model-consistent adversary (`analyses.wp.consistent_adversary`): TVD - lambda KL, the lower
    mean training objective wins, early stopping after `patience` epochs without improvement.
`run_training` (J&W grid cell) and `run_transformer_training` (A&Z) train one model and write its run files.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from attnexp.errors import ConfigError
from attnexp.models.device import resolve_device

# J&W §5: Adam (amsgrad), learning rate 1e-3, weight decay 1e-5 (none on the attention); not configurable
JW_LEARNING_RATE = 1e-3


JW_WEIGHT_DECAY = 1e-5


PAPERS = ("jw", "wp", "az")


@dataclass(frozen=True)
class TrainSettings:
    """How one model is trained. J&W and W&P runs take `epochs` and `batch_size` from the dataset (registry
    values, overridden under `hyperparameters.<dataset>`), the Transformer from `az.train`; `select_on` is
    `model_selection.split` (W&P: `wp.select_on`), `deterministic` is `seeding.deterministic`, `device` the
    resolved top-level `device` ("cpu", "cuda", "cuda:N"; `models.device.resolve_device`)."""

    CONFIG_KEY: ClassVar[str] = "hyperparameters"
    epochs: int
    batch_size: int
    seed: int
    select_on: str  # "dev"; quirk "test" (the paper-era runs)
    deterministic: bool
    learning_rate: float
    weight_decay: float
    device: str  # "cpu", "cuda", "cuda:N"
    padded_lstm: bool  # BiLSTMs over the padded batch (faster on CPU; packed: equal up to float rounding)
    fused_adam: bool  # Adam's fused kernel (2-4x faster steps on large embeddings; the loop: equal up to rounding)

    @classmethod
    def from_config(cls, config: dict, *, seed: int, hyperparameters: dict | None = None, paper: str = "jw") -> "TrainSettings":
        """The settings of one `paper` ("jw", "wp", "az") run from the validated config; J&W and W&P runs
        need the dataset's resolved `hyperparameters` (epochs, batch_size, ...)."""
        if paper not in PAPERS:
            raise ValueError(f"unknown paper {paper!r}; choose one of {PAPERS}")
        common = {
            "seed": seed,
            "deterministic": config["seeding"]["deterministic"],
            "device": resolve_device(config.get("device", "auto")),
            "padded_lstm": bool(config.get("padded_lstm", True)),
            "fused_adam": bool(config.get("fused_adam", True)),
        }
        if paper == "az":
            train = config["az"]["train"]
            return cls(
                epochs=train["epochs"],
                batch_size=train["batch_size"],
                select_on=config["model_selection"]["split"],
                learning_rate=train["learning_rate"],
                weight_decay=0.0,
                **common,
            )
        if hyperparameters is None:
            raise ValueError(f"{paper} runs are trained with the dataset's hyperparameters (epochs, batch_size)")
        return cls(
            epochs=hyperparameters["epochs"],
            batch_size=hyperparameters["batch_size"],
            select_on=config["wp"]["select_on"] if paper == "wp" else config["model_selection"]["split"],
            learning_rate=JW_LEARNING_RATE,
            weight_decay=JW_WEIGHT_DECAY,
            **common,
        )


@dataclass(frozen=True)
class HFSettings:
    """One entry of config `hf.models` with the section's training options (defaults in the schema)."""

    CONFIG_KEY: ClassVar[str] = "hf"

    name: str
    checkpoint: str
    finetune: bool
    allow_download: bool
    max_length: int
    epochs: int
    batch_size: int
    learning_rate: float
    deterministic: bool = True
    select_on: str = "dev"
    fused_adam: bool = True  # the top-level `fused_adam` switch, as for every other training

    @classmethod
    def from_config(cls, config: Mapping, name: str) -> "HFSettings":
        section = config[cls.CONFIG_KEY]
        if name not in section["models"]:
            raise ConfigError(f"hf model {name!r} is not in hf.models ({', '.join(section['models'])})")
        model = section["models"][name]
        train = {**section["train"], **model.get("train", {})}
        return cls(
            name=name,
            checkpoint=str(model["checkpoint"]),
            finetune=bool(model["finetune"]),
            allow_download=bool(section["allow_download"]),
            max_length=int(model.get("max_length", section["max_length"])),
            epochs=int(train["epochs"]),
            batch_size=int(train["batch_size"]),
            learning_rate=float(train["learning_rate"]),
            deterministic=config["seeding"]["deterministic"],
            select_on=config["model_selection"]["split"],
            fused_adam=bool(config.get("fused_adam", True)),
        )
