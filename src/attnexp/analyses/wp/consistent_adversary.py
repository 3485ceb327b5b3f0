"""Model-consistent adversarial training (W&P §4): a fresh model matches the base model's predictions
(TVD) while its attention is pushed away from the base attention (KL), with no gold labels in the loss.

  L(B) = sum_i TVD(y_a(i), y_b(i)) - lambda * sum_i KL(alpha_a(i) || alpha_b(i))
"""

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.divergences import jsd, kl_divergence
from attnexp.analyses.wp.donors import DonorTable
from attnexp.data.batching import Batch, collate, length_noise_batches, sequential_batches
from attnexp.data.preprocess import positive_class_weight, split_frame
from attnexp.models.classifier import AttentionClassifier
from attnexp.models.metrics import classification_metrics
from attnexp.models.train import TrainResult, TrainSettings, _optimizers, predict_distribution
from attnexp.seeding import seed_everything

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
    model: AttentionClassifier, batch: Batch, base: DonorTable, tvd_binary: str = "full"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-instance TVD to the base predictions and KL(alpha_a || alpha_b), each [B], differentiable."""
    output = model(batch)
    p_a = model.distribution(output.logits)[:, 1]
    return binary_tvd(p_a, base.p_for(batch), tvd_binary), kl_divergence(output.attention, base.attention_for(batch))


def adversary_loss(tvd: torch.Tensor, kl: torch.Tensor, lam: float) -> torch.Tensor:
    return tvd.sum() - lam * kl.sum()


@torch.no_grad()
def mean_objective(
    model: AttentionClassifier, rows: pd.DataFrame, base: DonorTable, objective: AdversaryObjective, batch_size: int = 128
) -> dict:
    """The training objective averaged over instances (selection uses no dev or test data)."""
    model.eval()
    tvds, kls = [], []
    for batch in sequential_batches(rows, batch_size):
        tvd, kl = adversary_terms(model, batch, base, objective.tvd_binary)
        tvds.append(tvd)
        kls.append(kl)
    tvd, kl = torch.cat(tvds), torch.cat(kls)
    return {"objective": float((tvd - objective.lam * kl).mean()), "tvd": float(tvd.mean()), "kl": float(kl.mean())}


def train_consistent_adversary(
    model: AttentionClassifier,
    instances: pd.DataFrame,
    base: DonorTable,
    settings: TrainSettings,
    objective: AdversaryObjective,
    progress: Callable[[str], None] = print,
) -> TrainResult:
    """Train all parameters on the adversarial loss; checkpoint on the mean training objective, stop early."""
    if not model.is_binary:
        raise ValueError("the model-consistent adversary is defined for binary classification only (W&P §1)")
    seed_everything(settings.seed, settings.deterministic)
    rng = np.random.default_rng(settings.seed)
    train_rows, test_rows = split_frame(instances, "train"), split_frame(instances, "test")
    pos_weight = positive_class_weight(train_rows["label"].to_numpy())
    optimizers = _optimizers(model, settings)

    history, best, best_state, best_epoch, stale = [], 1e10, None, -1, 0
    for epoch in range(objective.max_epochs):
        start = time.perf_counter()
        model.train()
        for index in length_noise_batches(train_rows["length"].to_numpy(), settings.batch_size, rng):
            batch = collate(train_rows.iloc[index])
            tvd, kl = adversary_terms(model, batch, base, objective.tvd_binary)
            loss = adversary_loss(tvd, kl, objective.lam)
            if objective.class_weight_scaling:
                loss = loss * torch.where(batch.labels == 1, pos_weight, 1.0).sum()
            if not torch.isfinite(loss):
                raise FloatingPointError(f"adversarial loss is not finite in epoch {epoch + 1} (lambda {objective.lam})")
            for opt in optimizers:
                opt.zero_grad()
            loss.backward()
            for opt in optimizers:
                opt.step()
        summary = mean_objective(model, train_rows, base, objective)
        kept = summary["objective"] < best
        if kept:
            best, best_state, best_epoch, stale = summary["objective"], copy.deepcopy(model.state_dict()), epoch, 0
        else:
            stale += 1
        seconds = time.perf_counter() - start
        history.append({"epoch": epoch, **summary, "kept": kept, "seconds": seconds})
        progress(
            f"epoch {epoch + 1}/{objective.max_epochs}: objective {summary['objective']:.4f} (TVD {summary['tvd']:.4f}, "
            f"KL {summary['kl']:.4f}){' (kept)' if kept else ''}, {seconds:.1f}s"
        )
        if stale >= objective.patience:
            progress(f"stopping: {objective.patience} epochs without improvement")
            break
    model.load_state_dict(best_state)
    model.eval()
    test_metrics = classification_metrics("bc", test_rows["label"].to_numpy(), predict_distribution(model, test_rows))
    test_metrics.update(best_epoch=best_epoch, epochs_run=len(history))
    return TrainResult(model, pd.DataFrame(history), best_epoch, test_metrics)


def divergence_to_base(
    base_p: np.ndarray, base_attention: np.ndarray, p: np.ndarray, attention: np.ndarray, tvd_binary: str = "full"
) -> tuple[np.ndarray, np.ndarray]:
    """Per-instance (TVD of outputs, JSD of attentions) to the base; attentions padded [N, L] with shared zeros."""
    tvd = binary_tvd(torch.as_tensor(p), torch.as_tensor(base_p), tvd_binary)
    return tvd.numpy(), jsd(torch.as_tensor(base_attention), torch.as_tensor(attention)).numpy()
