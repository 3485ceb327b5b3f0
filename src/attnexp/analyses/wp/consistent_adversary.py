"""Model-consistent adversarial training (W&P §4): a fresh model matches the base model's predictions
(TVD) while its attention is pushed away from the base attention (KL), with no gold labels in the loss.

  L(B) = sum_i TVD(y_a(i), y_b(i)) - lambda * sum_i KL(alpha_a(i) || alpha_b(i))
"""

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.divergences import jsd, kl_divergence
from attnexp.analyses.wp.donors import DonorTable
from attnexp.data.batching import Batch, length_sorted, sequential_batches
from attnexp.data.preprocess import positive_class_weight
from attnexp.models.classifier import AttentionClassifier
from attnexp.models.device import model_device
from attnexp.models.settings import FitSettings
from attnexp.models.train import TrainResult, evaluation_batches, fit

TVD_BINARY = ("full", "half")


@dataclass(frozen=True)
class AdversaryObjective:
    lam: float
    tvd_binary: str = "full"  # quirk: "half" (the code's 1/2 |p_a - p_b|)
    class_weight_scaling: bool = False  # quirk: multiply each batch loss by its total class weight
    max_epochs: int = 80
    patience: int = 10


def binary_tvd(p_a: torch.Tensor, p_b: torch.Tensor, tvd_binary: str = "full") -> torch.Tensor:
    """TVD between two binary output distributions: |p_a - p_b| (DEFAULT) or the code's half of it."""
    if tvd_binary not in TVD_BINARY:
        raise ValueError(f"unknown tvd_binary {tvd_binary!r}; choose one of {TVD_BINARY}")
    return (p_a - p_b).abs() * (0.5 if tvd_binary == "half" else 1.0)


def adversary_terms(
    model: AttentionClassifier,
    batch: Batch,
    base: DonorTable,
    tvd_binary: str = "full",
    targets: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-instance TVD to the base predictions and KL(alpha_a || alpha_b), each [B], differentiable; `targets`:
    the base's (p, attention) for this batch when already gathered (`base.targets(batch)`)."""
    output = model(batch)
    p_a = model.distribution(output.logits)[:, 1]
    p_b, attention_b = base.targets(batch) if targets is None else targets
    return binary_tvd(p_a, p_b, tvd_binary), kl_divergence(output.attention, attention_b)


def adversary_loss(tvd: torch.Tensor, kl: torch.Tensor, lam: float) -> torch.Tensor:
    return tvd.sum() - lam * kl.sum()


@torch.no_grad()
def mean_objective(
    model: AttentionClassifier,
    rows: pd.DataFrame,
    base: DonorTable,
    objective: AdversaryObjective,
    batch_size: int = 128,
    batches: list[Batch] | None = None,
    targets: list[tuple[torch.Tensor, torch.Tensor]] | None = None,
) -> dict:
    """The training objective averaged over instances (selection uses no dev or test data), computed over the
    rows shortest first (each instance's terms do not depend on its batch's padding; the mean, up to float
    rounding, not on the order); `batches` and `targets`: the rows already collated and the base's (p,
    attention) for each batch, as `ConsistentAdversary` keeps them for every epoch."""
    model.eval()
    batches = sequential_batches(length_sorted(rows), batch_size) if batches is None else batches
    tvds, kls = [], []
    for number, batch in enumerate(batches):
        target = None if targets is None else targets[number]
        tvd, kl = adversary_terms(model, batch.to(model_device(model)), base, objective.tvd_binary, target)
        tvds.append(tvd)
        kls.append(kl)
    tvd, kl = torch.cat(tvds), torch.cat(kls)
    return {"objective": float((tvd - objective.lam * kl).mean()), "tvd": float(tvd.mean()), "kl": float(kl.mean())}


class ConsistentAdversary:
    """`fit`'s objective for W&P §4: the adversarial loss per batch (times the batch's total class weight under
    the quirk `class_weight_scaling`; a non-finite loss is an error), the mean training objective per epoch,
    lower is better from the first epoch on, early stopping after `patience` epochs without improvement."""

    first_epoch_eligible = True
    initial_best = 1e10
    finite_loss = True

    def __init__(self, objective: AdversaryObjective, base: DonorTable):
        self.objective, self.base = objective, base
        self.patience = objective.patience
        self.name = f"adversarial (lambda {objective.lam})"

    def start(self, model: AttentionClassifier, instances: pd.DataFrame, train_rows: pd.DataFrame, settings: FitSettings) -> None:
        """Collate the train rows once, shortest first (the split is not length-sorted: batches in its own order
        pad to their longest row), with the base's targets for each batch, for every epoch's objective."""
        self.train_rows = train_rows
        self.train_batches = evaluation_batches(length_sorted(train_rows), settings.device)
        self.train_targets = [self.base.targets(batch) for batch in self.train_batches]
        self.pos_weight = positive_class_weight(train_rows["label"].to_numpy())

    def loss(self, model: AttentionClassifier, batch: Batch) -> torch.Tensor:
        tvd, kl = adversary_terms(model, batch, self.base, self.objective.tvd_binary)
        loss = adversary_loss(tvd, kl, self.objective.lam)
        if self.objective.class_weight_scaling:
            loss = loss * torch.where(batch.labels == 1, self.pos_weight, 1.0).sum()
        return loss

    def evaluate(self, model: AttentionClassifier, train_loss: float) -> tuple[float, dict]:
        summary = mean_objective(
            model, self.train_rows, self.base, self.objective, batches=self.train_batches, targets=self.train_targets
        )
        return summary["objective"], summary

    @staticmethod
    def improves(score: float, best: float) -> bool:
        return score < best

    def describe(self, columns: dict) -> str:
        return f"objective {columns['objective']:.4f} (TVD {columns['tvd']:.4f}, KL {columns['kl']:.4f})"


def train_consistent_adversary(
    model: AttentionClassifier,
    instances: pd.DataFrame,
    base: DonorTable,
    settings: FitSettings,
    objective: AdversaryObjective,
    progress: Callable[[str], None] = print,
) -> TrainResult:
    """Train all parameters on the adversarial loss for up to `objective.max_epochs` epochs; checkpoint on the
    mean training objective, stop early; test metrics also give `epochs_run`."""
    if not model.is_binary:
        raise ValueError("the model-consistent adversary is defined for binary classification only (W&P §1)")
    return fit(model, instances, replace(settings, epochs=objective.max_epochs), ConsistentAdversary(objective, base), progress)


def divergence_to_base(
    base_p: np.ndarray, base_attention: np.ndarray, p: np.ndarray, attention: np.ndarray, tvd_binary: str = "full"
) -> tuple[np.ndarray, np.ndarray]:
    """Per-instance (TVD of outputs, JSD of attentions) to the base; attentions padded [N, L] with shared zeros."""
    # torch.tensor copies: the arrays may be read-only views of parquet columns
    tvd = binary_tvd(torch.tensor(p), torch.tensor(base_p), tvd_binary)
    return tvd.numpy(), jsd(torch.tensor(base_attention), torch.tensor(attention)).numpy()
