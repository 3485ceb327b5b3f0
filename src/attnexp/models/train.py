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

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
import torch
from torch import nn

from attnexp.data.batching import Batch, TensorRows, length_noise_batches
from attnexp.data.preprocess import positive_class_weight, split_frame
from attnexp.models.classifier import AttentionClassifier, ModelConfig
from attnexp.models.device import model_device
from attnexp.models.interface import AttentionModel, model_logits
from attnexp.models.metrics import classification_metrics, selection_metric
from attnexp.models.settings import FitSettings
from attnexp.runlog import Heartbeat
from attnexp.seeding import seed_everything


@dataclass
class TrainResult:
    model: AttentionModel
    history: pd.DataFrame  # one row per epoch
    best_epoch: int  # 1-based, as the log's "epoch k/n" lines and train_log.csv's `epoch` column
    test_metrics: dict


class Objective(Protocol):
    """What `fit` minimises and how it picks the epoch to keep. `start` prepares one run (it may keep
    state: an objective object serves one `fit` at a time)."""

    first_epoch_eligible: bool  # may epoch 0 be kept
    patience: int | None  # stop after this many epochs without a kept one; None: run every epoch
    initial_best: float  # the score an epoch must improve on to be kept
    finite_loss: bool  # a non-finite batch loss is an error (FloatingPointError) rather than trained on
    name: str  # what the error calls the loss

    def start(self, model: AttentionModel, instances: pd.DataFrame, train_rows: pd.DataFrame, settings: FitSettings) -> None:
        """Prepare for a run (selection rows, class weights) before the optimisers are built."""

    def loss(self, model: AttentionModel, batch: Batch) -> torch.Tensor:
        """The scalar loss of one training batch (model in train mode)."""

    def evaluate(self, model: AttentionModel, train_loss: float) -> tuple[float, dict]:
        """After an epoch: (selection score, the epoch's columns of the training log)."""

    def improves(self, score: float, best: float) -> bool:
        """Whether `score` beats the best kept so far."""

    def describe(self, columns: dict) -> str:
        """The epoch's progress line (after "epoch e/E: ")."""


class Classification:
    """J&W §5: weighted BCE summed over the batch (BC, pos_weight = N / positives - 1) or mean cross-entropy
    (QA/NLI); keep the epoch with the best ROC-AUC (BC) or accuracy (QA/NLI) on `settings.select_on`.
    J&W never keep epoch 0; W&P runs may (`first_epoch_eligible`)."""

    patience = None
    initial_best = 0.0
    finite_loss = False
    name = "classification"

    def __init__(self, first_epoch_eligible: bool = False):
        self.first_epoch_eligible = first_epoch_eligible

    def start(self, model: AttentionModel, instances: pd.DataFrame, train_rows: pd.DataFrame, settings: FitSettings) -> None:
        self.task, self.select_on = model.config.task, settings.select_on
        self.select_rows = split_frame(instances, settings.select_on)
        self.select_batches = evaluation_batches(self.select_rows, settings.device)
        self.pos_weight = positive_class_weight(train_rows["label"].to_numpy()) if self.task == "bc" else None
        self.cross_entropy = nn.CrossEntropyLoss()

    def loss(self, model: AttentionModel, batch: Batch) -> torch.Tensor:
        logits = model_logits(model, batch)
        if self.task == "bc":
            target = batch.labels.float()
            weight = torch.where(batch.labels == 1, self.pos_weight, 1.0)
            return nn.functional.binary_cross_entropy_with_logits(logits, target, weight=weight, reduction="sum")
        return self.cross_entropy(logits, batch.labels)

    def evaluate(self, model: AttentionModel, train_loss: float) -> tuple[float, dict]:
        labels = self.select_rows["label"].to_numpy()
        score = selection_metric(
            self.task, classification_metrics(self.task, labels, predict_batches(model, self.select_batches))
        )
        return score, {"train_loss": train_loss, f"{self.select_on}_{self._metric[0]}": score}

    @staticmethod
    def improves(score: float, best: float) -> bool:
        return score > best

    def describe(self, columns: dict) -> str:
        name, label = self._metric
        return f"loss {columns['train_loss']:.3f}, {self.select_on} {label} {columns[f'{self.select_on}_{name}']:.4f}"

    @property
    def _metric(self) -> tuple[str, str]:
        return ("roc_auc", "ROC-AUC") if self.task == "bc" else ("accuracy", "accuracy")


class CrossEntropy(Classification):
    """A&Z (spec §2.1): mean cross-entropy without class weights (BC: the binary cross-entropy of the one
    logit, which is the two-class softmax cross-entropy of logits (0, z)); keep the epoch with the best
    accuracy on `settings.select_on`, epoch 0 included; stop after `patience` epochs without improvement."""

    initial_best = -1.0  # accuracy >= 0: the first epoch is always kept
    name = "cross-entropy"

    def __init__(self, patience: int | None):
        super().__init__(first_epoch_eligible=True)
        self.patience = patience

    def loss(self, model: AttentionModel, batch: Batch) -> torch.Tensor:
        logits = model_logits(model, batch)
        if self.task == "bc":
            return nn.functional.binary_cross_entropy_with_logits(logits, batch.labels.float())
        return self.cross_entropy(logits, batch.labels)

    def evaluate(self, model: AttentionModel, train_loss: float) -> tuple[float, dict]:
        labels = self.select_rows["label"].to_numpy()
        score = classification_metrics(self.task, labels, predict_distribution(model, self.select_rows))["accuracy"]
        return score, {"train_loss": train_loss, f"{self.select_on}_accuracy": score}

    @property
    def _metric(self) -> tuple[str, str]:
        return ("accuracy", "accuracy")


AZ_RECIPES = ("spec", "jw")


def az_objective(recipe: str, patience: int) -> Objective:
    """The Transformer's objective: `spec` (A&Z, `CrossEntropy(patience)`) or `jw` (`Classification()`:
    class-weighted summed BCE, dev ROC-AUC, epoch 0 never kept, no patience)."""
    if recipe == "spec":
        return CrossEntropy(patience)
    if recipe == "jw":
        return Classification()
    raise ValueError(f"unknown az.train.recipe {recipe!r}; choose one of {AZ_RECIPES}")


def build_model(
    meta: dict,
    encoder: str,
    attention: str,
    embedding_dim: int,
    hidden_size: int,
    cnn_filters: int = 64,
    mean_includes_padding: bool = False,
    seed: int | None = None,
    embeddings: torch.Tensor | None = None,
) -> AttentionClassifier:
    """A fresh model for the dataset described by `meta`; `seed` makes its initial weights repeatable.

    `embeddings` ([vocab, dim]) replaces the random initial embedding rows (pretrained word vectors).
    """
    if seed is not None:
        seed_everything(seed)
    config = ModelConfig(
        vocab_size=len(meta["vocab"]),
        n_classes=len(meta["classes"]),
        task=meta["task"],
        encoder=encoder,
        attention=attention,
        embedding_dim=embedding_dim,
        hidden_size=hidden_size,
        cnn_filters=cnn_filters,
        mean_includes_padding=mean_includes_padding,
    )
    return AttentionClassifier(config, embeddings)


def model_from_options(
    meta: dict, encoder: str, attention: str, hyperparameters: dict, model_options: dict, seed: int, embeddings=None
) -> AttentionClassifier:
    """`build_model` from the config's `hyperparameters` and `model` sections; weights depend only on `seed`."""
    return build_model(
        meta,
        encoder,
        attention,
        hyperparameters["embedding_dim"],
        hyperparameters["hidden_size"],
        model_options["cnn_filters_per_kernel"],
        model_options["average_mean_includes_padding"],
        seed=seed,
        embeddings=embeddings,
    )


EVALUATION_BATCH_SIZE = 128


def evaluation_batches(rows: pd.DataFrame, device: str = "cpu", batch_size: int = EVALUATION_BATCH_SIZE) -> list[Batch]:
    """The rows in their order as batches on `device`, collated once for every epoch's evaluation."""
    tensors = TensorRows(rows)
    return [tensors.batch(np.arange(i, min(i + batch_size, len(rows)))).to(device) for i in range(0, len(rows), batch_size)]


@torch.no_grad()
def predict_batches(model: AttentionModel, batches: list[Batch]) -> np.ndarray:
    """Output distributions [N, C] (on the CPU) for the batches' rows, in their order."""
    model.eval()
    parts = [model.distribution(model_logits(model, b)) for b in batches]
    return torch.cat(parts).cpu().numpy() if parts else np.zeros((0, model.config.n_classes))


def predict_distribution(model: AttentionModel, rows: pd.DataFrame, batch_size: int = EVALUATION_BATCH_SIZE) -> np.ndarray:
    """Output distributions [N, C] for the rows, in their order (on the model's device)."""
    return predict_batches(model, evaluation_batches(rows, str(model_device(model)), batch_size))


def build_optimizers(model: AttentionModel, settings: FitSettings) -> list[torch.optim.Optimizer]:
    """One Adam (QA/NLI) or one per parameter group (BC: encoder, decoder, attention without weight decay);
    amsgrad as `settings.amsgrad` says (J&W: yes; the A&Z Transformer: plain Adam by default)."""
    fused = True if settings.fused_adam else None  # None: torch's default, the per-parameter loop on the CPU
    adam = lambda params, wd: torch.optim.Adam(  # noqa: E731
        params, lr=settings.learning_rate, weight_decay=wd, amsgrad=settings.amsgrad, fused=fused
    )
    if not model.is_binary:
        return [adam(model.parameters(), settings.weight_decay)]
    groups = model.parameter_groups()
    optimizers = [adam(groups["encoder"], settings.weight_decay), adam(groups["decoder"], settings.weight_decay)]
    if groups["attention"]:
        optimizers.append(adam(groups["attention"], 0.0))
    return optimizers


def fit(
    model: AttentionModel,
    instances: pd.DataFrame,
    settings: FitSettings,
    objective: Objective | None = None,
    progress: Callable[[str], None] = print,
) -> TrainResult:
    """Train on the train split for `settings.epochs` epochs (fewer if the objective's patience runs out),
    keep the best eligible epoch's weights (none kept: the last epoch's) and score them on the test split.
    The default objective is J&W's (`Classification()`)."""
    objective = Classification() if objective is None else objective
    seed_everything(settings.seed, settings.deterministic)
    rng = np.random.default_rng(settings.seed)
    train_rows, test_rows = split_frame(instances, "train"), split_frame(instances, "test")
    settings.compute.apply(model)  # the device and the BiLSTMs' padded_lstm
    train_tensors, lengths = TensorRows(train_rows), train_rows["length"].to_numpy() + 2  # L = n + 2 (markers)
    objective.start(model, instances, train_rows, settings)
    optimizers = build_optimizers(model, settings)

    # Epochs count from 1 everywhere a user sees them: the log, train_log.csv and metrics.json `best_epoch`.
    history, best, best_state, best_epoch, stale = [], objective.initial_best, None, 0, 0
    for epoch in range(settings.epochs):
        start = time.perf_counter()
        model.train()
        total_loss, beat = 0.0, Heartbeat()
        batches = length_noise_batches(lengths, settings.batch_size, rng)
        for number, index in enumerate(batches, start=1):
            loss = objective.loss(model, train_tensors.batch(index).to(settings.device))
            if objective.finite_loss and not torch.isfinite(loss):
                raise FloatingPointError(f"{objective.name} loss is not finite in epoch {epoch + 1}")
            for opt in optimizers:
                opt.zero_grad()
            loss.backward()
            for opt in optimizers:
                opt.step()
            total_loss += loss.item()
            if beat.due():  # an epoch of minutes (IMDB, a Transformer) shows it is alive
                progress(
                    f"epoch {epoch + 1}/{settings.epochs}: batch {number}/{len(batches)}, "
                    f"mean loss {total_loss / number:.4f}, {time.perf_counter() - start:.0f}s"
                )
        score, columns = objective.evaluate(model, total_loss)
        kept = (epoch > 0 or objective.first_epoch_eligible) and objective.improves(score, best)
        if kept:
            best, best_state, best_epoch, stale = score, copy.deepcopy(model.state_dict()), epoch + 1, 0
        else:
            stale += 1
        seconds = time.perf_counter() - start
        history.append({"epoch": epoch + 1, **columns, "kept": kept, "seconds": seconds})
        progress(f"epoch {epoch + 1}/{settings.epochs}: {objective.describe(columns)}{' (kept)' if kept else ''}, {seconds:.1f}s")
        if objective.patience is not None and stale >= objective.patience:
            progress(f"stopping: {objective.patience} epochs without improvement")
            break
    if best_state is None:
        progress("no eligible epoch improved the selection score; keeping the last epoch's weights")
        best_epoch = len(history)
    else:
        model.load_state_dict(best_state)
    model.eval()
    test_metrics = classification_metrics(
        model.config.task, test_rows["label"].to_numpy(), predict_batches(model, evaluation_batches(test_rows, settings.device))
    )
    test_metrics["best_epoch"] = best_epoch
    if objective.patience is not None:
        test_metrics["epochs_run"] = len(history)
    return TrainResult(model, pd.DataFrame(history), best_epoch, test_metrics)


def word_vectors(embeddings: dict | None, meta: dict, dim: int, seed: int) -> tuple[str, torch.Tensor | None, bool, dict | None]:
    """(source recorded in the run config, initial embedding matrix or None, comparable, the `vectors` record) for
    `embeddings` ({"source", "path", "missing"} and, for a packaged substitute, "packaged", as `policy.embeddings`
    gives it); shared by the J&W and W&P runs.

    The record names the vectors and gives their checksums (`attnexp.datasets.vectors.identify`); a run is comparable
    only when its dataset is and, where the paper used pretrained vectors, the file is the paper's own: its SHA-1 is
    the official one, whatever key or file name it was given under. A packaged substitute never is."""
    source, vectors, record = "random", None, None
    if embeddings and embeddings.get("packaged"):
        from attnexp.data.embeddings import load_packaged_vectors

        name = embeddings["packaged"]
        matrix, found, record = load_packaged_vectors(name, meta["vocab"], dim, embeddings["missing"], seed)
        source, vectors = name, torch.from_numpy(matrix)
        print(f"embeddings: {found}/{len(meta['vocab'])} vocabulary words found in {name} ({record['package']})")
    elif embeddings and embeddings.get("path"):
        from attnexp.data.embeddings import load_word_vectors
        from attnexp.datasets.acquire import file_digests
        from attnexp.datasets.vectors import identify

        key = f"data.embeddings.{embeddings['source']}"
        matrix, found = load_word_vectors(embeddings["path"], meta["vocab"], dim, embeddings["missing"], seed, key)
        source, vectors = f"{embeddings['source']}:{embeddings['path']}", torch.from_numpy(matrix)
        record = identify(embeddings["source"], file_digests(embeddings["path"]), embeddings["path"])
        verdict = "the paper's file" if record["official"] else "not the paper's file: comparable false"
        print(f"embeddings: {found}/{len(meta['vocab'])} vocabulary words found in {embeddings['path']} ({verdict})")
    paper_vectors = bool((embeddings or {}).get("source"))
    comparable = bool(meta["comparable"]) and (not paper_vectors or bool(record and record["official"]))
    return source, vectors, comparable, record
