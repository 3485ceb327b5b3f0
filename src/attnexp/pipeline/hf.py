"""Hugging Face jobs: a grid dataset re-tokenized by one model's own tokenizer, and one model per (model, dataset,
seed), used as given or fine-tuned with `models.train.fit` (J&W's `Classification` objective)."""

from attnexp.errors import ConfigError
from attnexp.pipeline import Files
from attnexp.pipeline.settings import HFRunSettings, resolved


def run_hf_tokenize(*, inputs: Files, outputs: Files, settings: HFRunSettings, threads: int = 1) -> dict:
    """The dataset tokenized for one Hugging Face model (`outputs`: instances, meta): the instances and splits of
    the preprocessed grid dataset, their text read again from the raw files (`inputs`: `raw_{role}`)."""
    from attnexp.data.preprocess import read_preprocessed, write_preprocessed
    from attnexp.models.hf.data import hf_instances, load_tokenizer, raw_texts, verbalizer_words

    hf, raw = settings.hf, {key.removeprefix("raw_"): path for key, path in inputs.items() if key.startswith("raw_")}
    instances, meta = read_preprocessed(inputs["instances"], inputs["meta"])
    tokenizer = load_tokenizer(hf.checkpoint, hf.allow_download, hf.gguf_file)
    joiner = ""
    texts = raw_texts(settings.dataset, raw, settings.declaration)
    if hf.kind != "classifier" and "question" in texts:
        raise ConfigError(
            f"hf.models.{hf.name}: a {hf.kind} model reads one text per instance ({{text}}); {settings.dataset} has "
            "pairs (a premise and hypothesis, or a passage and question): run it on a one-text dataset"
        )
    if hf.kind != "classifier":  # a prompted LM: its verbalizer fits the classes; the text follows the template's space
        from attnexp.models.hf.prompts import text_joiner, verbalizer_problem

        words = verbalizer_words(hf.verbalizer, meta["classes"], f"hf.models.{hf.name}")
        problem = verbalizer_problem(tokenizer, dict(zip(meta["classes"], words, strict=True)))
        if problem:
            raise ConfigError(f"hf.models.{hf.name}.verbalizer: {problem}")
        joiner = text_joiner(hf.prompt)
    out, hf_meta = hf_instances(instances, meta, texts, tokenizer, hf.max_length, joiner)
    hf_meta["hf_model"] = {"name": hf.name, "checkpoint": hf.checkpoint}
    write_preprocessed(out, hf_meta, outputs["instances"], outputs["meta"])
    print(
        f"{settings.dataset} for {hf.name}: {len(out)} instances, mean {hf_meta['mean_length']:.1f} pieces, "
        f"{hf_meta['tokenizer']['truncated']} truncated to {hf.max_length}"
    )
    return hf_meta


def run_hf_model(*, inputs: Files, outputs: Files, settings: HFRunSettings, threads: int = 1) -> dict:
    """Load the checkpoint; fine-tune it on the train split (`hf.finetune`, best dev epoch kept) or use it as given;
    score it on test and write the run files (`paths.RUN_FILES`)."""
    import time

    import pandas as pd

    from attnexp.data.preprocess import read_preprocessed, split_frame
    from attnexp.models.checkpoint import write_run
    from attnexp.models.device import set_threads
    from attnexp.models.hf.loading import describe, load_pretrained, save_hf_model
    from attnexp.models.metrics import classification_metrics
    from attnexp.models.names import HF_ENCODER
    from attnexp.models.train import fit, predict_distribution
    from attnexp.pipeline.train import build_run_config

    set_threads(threads)
    start = time.perf_counter()
    dataset, seed, hf, fit_settings = settings.dataset, settings.seed, settings.hf, resolved(settings.fit)
    instances, meta = read_preprocessed(inputs["instances"], inputs["meta"])
    if hf.kind == "classifier":
        model = load_pretrained(
            hf.checkpoint,
            gguf_file=hf.gguf_file,
            task=meta["task"],
            n_classes=len(meta["classes"]),
            allow_download=hf.allow_download,
            finetune=hf.finetune,
            seed=seed,
        )
    else:  # an LM with a prompt and a verbalizer, used as given
        from attnexp.models.hf.data import verbalizer_words
        from attnexp.models.hf.prompted import load_prompted

        classes = {c: w for c, w in zip(meta["classes"], verbalizer_words(hf.verbalizer, meta["classes"], hf.name), strict=True)}
        model = load_prompted(
            hf.checkpoint,
            kind=hf.kind,
            template=hf.prompt,
            words=list(classes.values()),
            task=meta["task"],
            few_shot=[(text, _word(classes, label, hf.name)) for text, label in hf.few_shot],
            allow_download=hf.allow_download,
            gguf_file=hf.gguf_file,
        )
    model = model.to(fit_settings.device)
    print(f"{hf.name} on {dataset}: {describe(model)}, {sum(p.numel() for p in model.parameters())} parameters")
    if hf.finetune:
        result = fit(model, instances, fit_settings)
        model, history, metrics = result.model, result.history, result.test_metrics
    else:
        test = split_frame(instances, "test")
        metrics = classification_metrics(meta["task"], test["label"].to_numpy(), predict_distribution(model.eval(), test))
        history = pd.DataFrame(columns=["epoch", "train_loss", "kept", "seconds"])
    identity = {"dataset": dataset, "encoder": HF_ENCODER, "hf_model": hf.name, "seed": seed}
    config = build_run_config(
        identity,
        meta,
        None,
        hf={**vars(hf), "few_shot": [list(shot) for shot in hf.few_shot]},
        tokenizer=meta["tokenizer"] if "tokenizer" in meta else {},
        comparable=meta["comparable"],
    )
    save = lambda model, path, extra: save_hf_model(model, path, finetuned=hf.finetune, extra=extra)  # noqa: E731
    write_run(outputs, model, history, config, {**metrics, **identity}, save=save)
    print(f"test metrics: {metrics} ({time.perf_counter() - start:.1f}s)")
    return metrics


def _word(classes: dict, label: str, name: str) -> str:
    if label not in classes:
        raise ConfigError(f"hf.models.{name}.few_shot: label {label!r} is no class of the dataset ({', '.join(classes)})")
    return classes[label]
