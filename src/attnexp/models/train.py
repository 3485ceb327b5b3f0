"""Training and model selection (J&W §5): weighted BCE summed over the batch with three Adams (BC),
mean cross-entropy with one Adam (QA/NLI), length-noise batching, selection on dev after each epoch."""

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from attnexp.data.batching import collate, length_noise_batches, sequential_batches
from attnexp.data.preprocess import positive_class_weight, split_frame
from attnexp.models.classifier import AttentionClassifier, ModelConfig
from attnexp.models.metrics import classification_metrics, selection_metric
from attnexp.seeding import seed_everything


@dataclass(frozen=True)
class TrainSettings:
    epochs: int
    batch_size: int
    seed: int
    select_on: str = "dev"  # quirk: "test" (the paper-era runs)
    learning_rate: float = 1e-3
    weight_decay: float = 1e-5
    deterministic: bool = True
    first_epoch_eligible: bool = False  # W&P select from the first epoch on; J&W never keep epoch 0


@dataclass
class TrainResult:
    model: AttentionClassifier
    history: pd.DataFrame  # one row per epoch
    best_epoch: int
    test_metrics: dict


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
        model_options.get("cnn_filters_per_kernel", 64),
        model_options.get("average_mean_includes_padding", False),
        seed=seed,
        embeddings=embeddings,
    )


@torch.no_grad()
def predict_distribution(model: AttentionClassifier, rows: pd.DataFrame, batch_size: int = 128) -> np.ndarray:
    """Output distributions [N, C] for the rows, in their order."""
    model.eval()
    parts = [model.distribution(model(b).logits) for b in sequential_batches(rows, batch_size)]
    return torch.cat(parts).numpy() if parts else np.zeros((0, model.config.n_classes))


def _optimizers(model: AttentionClassifier, settings: TrainSettings) -> list[torch.optim.Optimizer]:
    adam = lambda params, wd: torch.optim.Adam(params, lr=settings.learning_rate, weight_decay=wd, amsgrad=True)  # noqa: E731
    if not model.is_binary:
        return [adam(model.parameters(), settings.weight_decay)]
    groups = model.parameter_groups()
    optimizers = [adam(groups["encoder"], settings.weight_decay), adam(groups["decoder"], settings.weight_decay)]
    if groups["attention"]:
        optimizers.append(adam(groups["attention"], 0.0))
    return optimizers


def train(
    model: AttentionClassifier, instances: pd.DataFrame, settings: TrainSettings, progress: Callable[[str], None] = print
) -> TrainResult:
    """Train on the train split, keep the epoch with the best selection metric (J&W: never epoch 0)."""
    seed_everything(settings.seed, settings.deterministic)
    rng = np.random.default_rng(settings.seed)
    task = model.config.task
    train_rows, select_rows, test_rows = (split_frame(instances, s) for s in ("train", settings.select_on, "test"))
    labels = train_rows["label"].to_numpy()
    pos_weight = positive_class_weight(labels) if task == "bc" else None
    optimizers = _optimizers(model, settings)
    cross_entropy = nn.CrossEntropyLoss()

    history, best_score, best_state, best_epoch = [], 0.0, None, -1
    for epoch in range(settings.epochs):
        start = time.perf_counter()
        model.train()
        total_loss = 0.0
        for index in length_noise_batches(train_rows["length"].to_numpy(), settings.batch_size, rng):
            batch = collate(train_rows.iloc[index])
            logits = model(batch).logits
            if task == "bc":
                target = batch.labels.float()
                weight = torch.where(batch.labels == 1, pos_weight, 1.0)
                loss = nn.functional.binary_cross_entropy_with_logits(logits, target, weight=weight, reduction="sum")
            else:
                loss = cross_entropy(logits, batch.labels)
            for opt in optimizers:
                opt.zero_grad()
            loss.backward()
            for opt in optimizers:
                opt.step()
            total_loss += loss.item()
        metrics = classification_metrics(task, select_rows["label"].to_numpy(), predict_distribution(model, select_rows))
        score = selection_metric(task, metrics)
        kept = (epoch > 0 or settings.first_epoch_eligible) and score > best_score
        if kept:
            best_score, best_state, best_epoch = score, copy.deepcopy(model.state_dict()), epoch
        seconds = time.perf_counter() - start
        history.append(
            {
                "epoch": epoch,
                "train_loss": total_loss,
                f"{settings.select_on}_{'roc_auc' if task == 'bc' else 'accuracy'}": score,
                "kept": kept,
                "seconds": seconds,
            }
        )
        progress(
            f"epoch {epoch + 1}/{settings.epochs}: loss {total_loss:.3f}, {settings.select_on} "
            f"{'ROC-AUC' if task == 'bc' else 'accuracy'} {score:.4f}{' (kept)' if kept else ''}, {seconds:.1f}s"
        )
    if best_state is None:
        progress("no epoch after the first improved the selection metric; keeping the last epoch's weights")
        best_epoch = settings.epochs - 1
    else:
        model.load_state_dict(best_state)
    model.eval()
    test_metrics = classification_metrics(task, test_rows["label"].to_numpy(), predict_distribution(model, test_rows))
    test_metrics["best_epoch"] = best_epoch
    return TrainResult(model, pd.DataFrame(history), best_epoch, test_metrics)


def run_training(
    instances_dir,
    dataset: str,
    encoder: str,
    attention: str,
    seed: int,
    hyperparameters: dict,
    select_on: str,
    model_options: dict,
    deterministic: bool,
    outputs: dict,
    threads: int = 1,
    embeddings: dict | None = None,
) -> dict:
    """Train one grid cell and write model, metrics, per-epoch log and the full run config.

    `embeddings` ({"source", "path", "missing"}) names a pretrained word-vector file; without one the
    embedding rows are N(0, 1), recorded as `embeddings: random`, and a dataset whose paper setup used
    pretrained vectors is flagged non-comparable.
    """
    from attnexp.data.preprocess import load_preprocessed
    from attnexp.io import write_csv, write_json, write_yaml
    from attnexp.models.classifier import save_model

    torch.set_num_threads(threads)
    instances, meta = load_preprocessed(instances_dir)
    source, vectors = "random", None
    if embeddings and embeddings.get("path"):
        from attnexp.data.embeddings import load_word_vectors

        matrix, found = load_word_vectors(
            embeddings["path"], meta["vocab"], hyperparameters["embedding_dim"], embeddings.get("missing", "zero"), seed
        )
        source, vectors = f"{embeddings['source']}:{embeddings['path']}", torch.from_numpy(matrix)
        print(f"embeddings: {found}/{len(meta['vocab'])} vocabulary words found in {embeddings['path']}")
    model = model_from_options(meta, encoder, attention, hyperparameters, model_options, seed, embeddings=vectors)
    comparable = bool(meta["comparable"]) and (source != "random" or not (embeddings or {}).get("source"))
    settings = TrainSettings(
        epochs=hyperparameters["epochs"],
        batch_size=hyperparameters["batch_size"],
        seed=seed,
        select_on=select_on,
        deterministic=deterministic,
    )
    print(f"training {dataset} {encoder}-{attention} seed {seed}: {sum(p.numel() for p in model.parameters())} parameters")
    result = train(model, instances, settings)
    run_config = {
        "dataset": dataset,
        "encoder": encoder,
        "attention": attention,
        "seed": seed,
        "hyperparameters": hyperparameters,
        "model_selection": {"split": select_on},
        "model": model_options,
        "seeding": {"deterministic": deterministic},
        "preprocessing": meta["options"],
        "embeddings": source,
        "comparable": comparable,
    }
    save_model(result.model, outputs["model"], extra={"run_config": run_config})
    write_csv(outputs["history"], result.history)
    write_yaml(outputs["config"], run_config)
    write_json(
        outputs["metrics"], {**result.test_metrics, "dataset": dataset, "encoder": encoder, "attention": attention, "seed": seed}
    )
    print(f"test metrics: {result.test_metrics}")
    return result.test_metrics
