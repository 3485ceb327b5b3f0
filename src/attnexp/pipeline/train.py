"""Training jobs: one J&W model per dataset x encoder x attention x seed (J&W §4-5) and the A&Z Transformer.

Both train with `models.train.fit` and write the run files of `paths.RUN_FILES` through `write_run`; the run's
`config.yaml` records every option that produced the model."""

from collections.abc import Mapping

from attnexp.models.settings import FitSettings
from attnexp.pipeline import Files
from attnexp.pipeline.settings import TrainSettings, TransformerSettings, resolved


def build_run_config(identity: Mapping, meta: Mapping, fit: FitSettings | None, selection: Mapping = (), **options) -> dict:
    """The config.yaml of every run (J&W, A&Z, W&P, Hugging Face): its identity, the options that made it, how its
    epoch was selected (`fit.select_on`, plus `selection`) and how it was seeded, and the preprocessing of its data;
    `write_run` adds the code version. A run without `fit` (a Hugging Face model used as given) has neither."""
    config = {**identity, **options, "preprocessing": meta["options"]}
    if fit is not None:
        config["model_selection"] = {"split": fit.select_on, **dict(selection)}
        config["seeding"] = {"deterministic": fit.deterministic}
    return config


def run_train(*, inputs: Files, outputs: Files, settings: TrainSettings, threads: int = 1) -> dict:
    """Train one J&W grid cell and write its run files.

    `settings.embeddings` ({"source", "path", "missing"}, or "packaged") names pretrained word vectors; without them
    the embedding rows are N(0, 1), recorded as `embeddings: random`, and a dataset whose paper setup used pretrained
    vectors is flagged non-comparable. With them, `vectors` records their name and checksums, and the run is
    comparable only when the file is the paper's own (`models.train.word_vectors`).
    """
    from attnexp.data.preprocess import read_preprocessed
    from attnexp.models.checkpoint import write_run
    from attnexp.models.device import set_threads
    from attnexp.models.train import fit, model_from_options, word_vectors

    set_threads(threads)
    s, sizes = settings, settings.hyperparameters
    instances, meta = read_preprocessed(inputs["instances"], inputs["meta"])
    source, vectors, comparable, record = word_vectors(s.embeddings, meta, sizes["embedding_dim"], s.seed)
    model = model_from_options(meta, s.encoder, s.attention, sizes, s.model, s.seed, embeddings=vectors)
    print(
        f"training {s.dataset} {s.encoder}-{s.attention} seed {s.seed}: {sum(p.numel() for p in model.parameters())} parameters"
    )
    result = fit(model, instances, resolved(s.fit))
    identity = {"dataset": s.dataset, "encoder": s.encoder, "attention": s.attention, "seed": s.seed}
    config = build_run_config(
        identity,
        meta,
        s.fit,
        hyperparameters=sizes,
        model=s.model,
        embeddings=source,
        vectors=record,
        comparable=comparable,
    )
    write_run(outputs, result.model, result.history, config, {**result.test_metrics, **identity})
    print(f"test metrics: {result.test_metrics}")
    return result.test_metrics


def run_train_transformer(*, inputs: Files, outputs: Files, settings: TransformerSettings, threads: int = 1) -> dict:
    """Train the A&Z Transformer (`az.model`, `az.train`) on one dataset and write the same run files as
    `run_train`; `settings.attention`: "self" (standard blocks) or "tiedcls" (tied last-layer [CLS] row, for the
    J&W analyses)."""
    from attnexp.data.preprocess import read_preprocessed
    from attnexp.models.checkpoint import write_run
    from attnexp.models.device import set_threads
    from attnexp.models.train import az_objective, fit
    from attnexp.models.transformer import ENCODER, build_transformer
    from attnexp.seeding import seed_everything

    set_threads(threads)
    s, fit_settings = settings, settings.fit
    instances, meta = read_preprocessed(inputs["instances"], inputs["meta"])
    longest = int(instances["tokens"].map(len).max())
    seed_everything(s.seed, fit_settings.deterministic)  # before the weights are initialised
    length = max(s.model["max_length"], longest)
    model = build_transformer(meta, **{**s.model, "max_length": length, "attention": s.attention})
    print(
        f"training {s.dataset} transformer-{s.attention} seed {s.seed}: {sum(p.numel() for p in model.parameters())} parameters"
    )
    result = fit(model, instances, resolved(fit_settings), az_objective(s.recipe, s.patience))
    train_options = {
        "epochs": fit_settings.epochs,
        "batch_size": fit_settings.batch_size,
        "learning_rate": fit_settings.learning_rate,
        "amsgrad": fit_settings.amsgrad,
        "recipe": s.recipe,
        "patience": s.patience,
    }
    identity = {"dataset": s.dataset, "encoder": ENCODER, "attention": s.attention, "seed": s.seed}
    az = {"model": s.model, "train": train_options}
    config = build_run_config(identity, meta, fit_settings, az=az, embeddings="random", comparable=meta["comparable"])
    write_run(outputs, result.model, result.history, config, {**result.test_metrics, **identity})
    print(f"test metrics: {result.test_metrics}")
    return result.test_metrics
