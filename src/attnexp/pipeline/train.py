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

from attnexp.data.preprocess import read_preprocessed
from attnexp.models.device import set_threads
from attnexp.models.settings import TrainSettings
from attnexp.models.train import az_objective, fit, model_from_options, word_vectors
from attnexp.seeding import seed_everything


def run_training(
    *,
    instances,
    meta,
    dataset: str,
    encoder: str,
    attention: str,
    hyperparameters: dict,
    model_options: dict,
    settings: TrainSettings,
    outputs: dict,
    embeddings: dict | None = None,
    threads: int = 1,
) -> dict:
    """Train one J&W grid cell (seed `settings.seed`) and write its run files (`paths.RUN_FILES`).

    `embeddings` ({"source", "path", "missing"}) names a pretrained word-vector file; without one the
    embedding rows are N(0, 1), recorded as `embeddings: random`, and a dataset whose paper setup used
    pretrained vectors is flagged non-comparable.
    """
    from attnexp.models.checkpoint import write_run

    set_threads(threads)
    seed = settings.seed
    instances, meta = read_preprocessed(instances, meta)
    source, vectors, comparable = word_vectors(embeddings, meta, hyperparameters["embedding_dim"], seed)
    model = model_from_options(meta, encoder, attention, hyperparameters, model_options, seed, embeddings=vectors)
    print(f"training {dataset} {encoder}-{attention} seed {seed}: {sum(p.numel() for p in model.parameters())} parameters")
    result = fit(model, instances, settings)
    run_config = {
        "dataset": dataset,
        "encoder": encoder,
        "attention": attention,
        "seed": seed,
        "hyperparameters": hyperparameters,
        "model_selection": {"split": settings.select_on},
        "model": model_options,
        "seeding": {"deterministic": settings.deterministic},
        "preprocessing": meta["options"],
        "embeddings": source,
        "comparable": comparable,
    }
    identity = {"dataset": dataset, "encoder": encoder, "attention": attention, "seed": seed}
    write_run(outputs, result.model, result.history, run_config, {**result.test_metrics, **identity})
    print(f"test metrics: {result.test_metrics}")
    return result.test_metrics


def run_transformer_training(
    *,
    instances,
    meta,
    dataset: str,
    model_options: dict,
    settings: TrainSettings,
    outputs: dict,
    recipe: str,
    patience: int,
    attention: str,
    threads: int = 1,
) -> dict:
    """Train the A&Z Transformer (`az.model` options, seed `settings.seed`) on one dataset and write the same
    run files as `run_training`. `recipe`, `patience`: `az.train` (see `az_objective`); `attention`: the
    variant, "self" (standard blocks) or "tiedcls" (tied last-layer [CLS] row, for the J&W analyses)."""
    from attnexp.models.checkpoint import write_run
    from attnexp.models.transformer import ENCODER, build_transformer

    set_threads(threads)
    seed = settings.seed
    instances, meta = read_preprocessed(instances, meta)
    longest = int(instances["tokens"].map(len).max())
    seed_everything(seed, settings.deterministic)  # before the weights are initialised
    length = max(model_options.get("max_length", 128), longest)
    model = build_transformer(meta, **{**model_options, "max_length": length, "attention": attention})
    print(f"training {dataset} transformer-{attention} seed {seed}: {sum(p.numel() for p in model.parameters())} parameters")
    result = fit(model, instances, settings, az_objective(recipe, patience))
    train_options = {
        "epochs": settings.epochs,
        "batch_size": settings.batch_size,
        "learning_rate": settings.learning_rate,
        "recipe": recipe,
        "patience": patience,
    }
    run_config = {
        "dataset": dataset,
        "encoder": ENCODER,
        "attention": attention,
        "seed": seed,
        "az": {"model": model_options, "train": train_options},
        "model_selection": {"split": settings.select_on},
        "seeding": {"deterministic": settings.deterministic},
        "preprocessing": meta["options"],
        "embeddings": "random",
        "comparable": meta["comparable"],
    }
    identity = {"dataset": dataset, "encoder": ENCODER, "attention": attention, "seed": seed}
    write_run(outputs, result.model, result.history, run_config, {**result.test_metrics, **identity})
    print(f"test metrics: {result.test_metrics}")
    return result.test_metrics
