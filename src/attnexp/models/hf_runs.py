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
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pandas as pd
import torch

from attnexp.data.preprocess import read_preprocessed, split_frame
from attnexp.errors import ConfigError
from attnexp.io import write_csv, write_json, write_yaml
from attnexp.models.names import HF_ENCODER
from attnexp.provenance import code_version


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


def checkpoint_problems(config: Mapping) -> list[str]:
    """Every configured model whose checkpoint cannot be loaded (message says where to put it); [] when all can."""
    from attnexp.models.hf import checkpoint_problem

    section = config["hf"]
    if not section["datasets"]:
        return []
    problems = [checkpoint_problem(str(m["checkpoint"]), section["allow_download"]) for m in section["models"].values()]
    return [f"hf.models.{name}: {p}" for name, p in zip(section["models"], problems, strict=True) if p]


def load_tokenizer(checkpoint: str, allow_download: bool = False):
    from transformers import AutoTokenizer

    from attnexp.models.hf import checkpoint_problem

    problem = checkpoint_problem(checkpoint, allow_download)
    if problem:
        raise ConfigError(problem)
    return AutoTokenizer.from_pretrained(checkpoint, local_files_only=not allow_download)


def hf_instances(
    instances: pd.DataFrame, meta: dict, texts: pd.DataFrame, tokenizer, max_length: int
) -> tuple[pd.DataFrame, dict]:
    """The grid's `instances` with `tokens` from `tokenizer` over `texts` (instance_id, text[, question]).

    Dev and test are re-sorted by their new length (stable), as preprocessing sorts them.
    """
    text = texts.set_index("instance_id")
    missing = sorted(set(instances["instance_id"]) - set(text.index))
    if missing:
        raise ValueError(f"{len(missing)} preprocessed instances have no raw text (e.g. {missing[:3]}); rerun preprocessing")
    first = text.loc[instances["instance_id"], "text"].tolist()
    second = text.loc[instances["instance_id"], "question"].tolist() if "question" in text else None
    encoded = tokenizer(first, second, truncation=True, max_length=max_length)["input_ids"]
    out = instances.drop(columns=[c for c in ("question", "tokens") if c in instances]).copy()
    out["tokens"] = [list(map(int, ids)) for ids in encoded]
    full = tokenizer(first, second, truncation=False)["input_ids"]
    truncated = int(sum(len(f) > max_length for f in full))
    out["length"] = out["tokens"].map(len) - 2
    out["rationale"] = [[] for _ in range(len(out))]
    parts = [out[out["split"] == "train"]]
    parts += [out[out["split"] == s].sort_values("length", kind="stable") for s in ("dev", "test")]
    out = pd.concat(parts, ignore_index=True)[
        ["instance_id", "split", "tokens", "label", "length", "rationale"] + (["candidates"] if "candidates" in out else [])
    ]
    vocab = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    hf_meta = {
        **meta,
        "vocab": vocab,
        "mean_length": float(out["length"].mean()),
        "tokenizer": {
            "class": type(tokenizer).__name__,
            "max_length": max_length,
            "truncated": truncated,
            "pairs_packed": second is not None,
        },
    }
    return out, hf_meta


def raw_texts(
    dataset: str, raw_dir: str | Path | None, user_files: dict | None = None, declaration: dict | None = None
) -> pd.DataFrame:
    """instance_id, text (and question) of every raw instance of a dataset, as preprocessing reads them
    (`declaration`: the config's `user_datasets.<dataset>` of a dataset declared there)."""
    from attnexp.datasets import get_dataset
    from attnexp.datasets.acquire import resolve_files
    from attnexp.datasets.user import user_spec

    spec = user_spec(dataset, declaration) if declaration else get_dataset(dataset)
    frame = spec.read(resolve_files(spec, raw_dir, user_files))
    columns = {"instance_id": [f"{spec.name}/{k}" for k in frame["key"]], "text": frame["text"].astype(str)}
    if "question" in frame:
        columns["question"] = frame["question"].astype(str)
    return pd.DataFrame(columns)


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
    from attnexp.models.train import TrainSettings, fit, predict_distribution

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
