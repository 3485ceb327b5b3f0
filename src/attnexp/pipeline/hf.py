"""Hugging Face runs: a grid dataset re-tokenized by a model's own tokenizer, and one model per (model, dataset,
seed), used as given or fine-tuned with `models.train.fit` (J&W's `Classification` objective).

Tokenization keeps the grid's preprocessing decisions: the same instances (ids, splits, labels, length
filter) as `results/preprocessed/{dataset}`, their text read again from the raw files (so no word becomes
[UNK] because it is missing from the training vocabulary), WordPiece-tokenized with [CLS] and [SEP],
truncated to `max_length` pieces. A pair (NLI premise / hypothesis, QA passage / question) is packed into
one sequence, [CLS] a [SEP] b [SEP]. Planted rationales index words, not pieces, so they are dropped.
"""

import time
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import torch

from attnexp.data.preprocess import read_preprocessed, split_frame
from attnexp.io import write_csv, write_json, write_yaml
from attnexp.models.hf_runs import hf_instances, load_tokenizer, raw_texts
from attnexp.models.names import HF_ENCODER
from attnexp.models.settings import HFSettings
from attnexp.provenance import code_version


def run_hf_tokenize(
    *,
    dataset: str,
    settings: HFSettings,
    preprocessed: Mapping[str, str | Path],
    raw_dir: str | Path | None,
    user_files: dict | None,
    outputs: Mapping[str, str | Path],
    declaration: dict | None = None,
) -> dict:
    """Write the dataset tokenized for one HF model (`outputs`: instances, meta as `paths.hf_preprocessed_files`)."""
    from attnexp.data.preprocess import write_preprocessed

    instances, meta = read_preprocessed(preprocessed["instances"], preprocessed["meta"])
    tokenizer = load_tokenizer(settings.checkpoint, settings.allow_download)
    out, hf_meta = hf_instances(
        instances, meta, raw_texts(dataset, raw_dir, user_files, declaration), tokenizer, settings.max_length
    )
    hf_meta["hf_model"] = {"name": settings.name, "checkpoint": settings.checkpoint}
    write_preprocessed(out, hf_meta, outputs["instances"], outputs["meta"])
    print(
        f"{dataset} for {settings.name}: {len(out)} instances, mean {hf_meta['mean_length']:.1f} pieces, "
        f"{hf_meta['tokenizer']['truncated']} truncated to {settings.max_length}"
    )
    return hf_meta


def run_hf_model(
    *,
    instances: str | Path,
    meta: str | Path,
    dataset: str,
    settings: HFSettings,
    seed: int,
    outputs: Mapping[str, str | Path],
    threads: int = 1,
    device: str = "auto",
) -> dict:
    """Load the checkpoint; fine-tune it on the train split (`settings.finetune`, best dev epoch kept) or use
    it as given; score it on test and write the run files (`paths.RUN_FILES`). `device`: the config's setting."""
    from attnexp.models.device import resolve_device
    from attnexp.models.hf import describe, load_pretrained, save_hf_model
    from attnexp.models.metrics import classification_metrics
    from attnexp.models.settings import TrainSettings
    from attnexp.models.train import fit, predict_distribution

    torch.set_num_threads(threads)
    start = time.perf_counter()
    instances, meta = read_preprocessed(instances, meta)
    model = load_pretrained(
        settings.checkpoint,
        task=meta["task"],
        n_classes=len(meta["classes"]),
        allow_download=settings.allow_download,
        finetune=settings.finetune,
        seed=seed,
    ).to(resolve_device(device))
    print(f"{settings.name} on {dataset}: {describe(model)}, {sum(p.numel() for p in model.parameters())} parameters")
    if settings.finetune:
        train = TrainSettings(
            epochs=settings.epochs,
            batch_size=settings.batch_size,
            seed=seed,
            select_on=settings.select_on,
            deterministic=settings.deterministic,
            learning_rate=settings.learning_rate,
            weight_decay=0.0,
            device=resolve_device(device),
            padded_lstm=False,
            fused_adam=settings.fused_adam,
        )
        result = fit(model, instances, train)
        model, history, metrics = result.model, result.history, result.test_metrics
    else:
        test = split_frame(instances, "test")
        metrics = classification_metrics(meta["task"], test["label"].to_numpy(), predict_distribution(model.eval(), test))
        history = pd.DataFrame(columns=["epoch", "train_loss", "kept", "seconds"])
    run_config = {
        "dataset": dataset,
        "encoder": HF_ENCODER,
        "hf_model": settings.name,
        "seed": seed,
        "hf": {k: v for k, v in vars(settings).items()},
        "preprocessing": meta["options"],
        "tokenizer": meta.get("tokenizer", {}),
        "comparable": meta["comparable"],
        "code_version": code_version(),
    }
    identity = {"dataset": dataset, "encoder": HF_ENCODER, "hf_model": settings.name, "seed": seed}
    save_hf_model(model, outputs["model"], finetuned=settings.finetune, extra={"run_config": run_config})
    write_csv(outputs["history"], history.drop(columns="seconds", errors="ignore"))  # wall times: timings.json
    write_yaml(outputs["config"], run_config)
    write_json(outputs["metrics"], {**metrics, **identity})
    write_json(outputs["timings"], {"seconds_per_epoch": history["seconds"].astype(float).round(3).tolist()})
    print(f"test metrics: {metrics} ({time.perf_counter() - start:.1f}s)")
    return metrics
