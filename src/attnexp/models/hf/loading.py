"""Loading and saving Hugging Face sequence classifiers: a checkpoint (a directory, a cached hub name, or a GGUF
file) as an `HFClassifier`, an in-memory model wrapped, and the run file the workflow writes and reads back (a
prompted LM's through `models.hf.prompted`)."""

import tempfile
from dataclasses import asdict, replace
from pathlib import Path

import torch
from torch import nn

from attnexp.errors import ConfigError
from attnexp.models.hf.architectures import is_decoder_only, sizes, with_padding
from attnexp.models.hf.checkpoints import checkpoint_problem
from attnexp.models.hf.classifier import HFClassifier, HFConfig, _check_task


def load_pretrained(
    checkpoint: str,
    *,
    task: str,
    n_classes: int,
    allow_download: bool = False,
    finetune: bool = False,
    seed: int | None = None,
    gguf_file: str | None = None,
) -> HFClassifier:
    """The checkpoint (a name or directory) with its tokenizer. `finetune`: a fresh classifier head when the
    checkpoint's label count does not fit the dataset (a base model); otherwise the labels must fit. `gguf_file`: the
    weights, config and tokenizer from that GGUF file of the checkpoint (transformers' `gguf_file=`), dequantized to
    float32; a GGUF file holds no classifier head, so the head is a new one (seeded by `seed`)."""
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer, GgufConfig

    problem = checkpoint_problem(checkpoint, allow_download, gguf_file)
    if problem:
        raise ConfigError(problem)
    local = not allow_download
    gguf = {} if gguf_file is None else {"gguf_file": gguf_file}
    tokenizer = AutoTokenizer.from_pretrained(checkpoint, local_files_only=local, **gguf)
    hf_config = AutoConfig.from_pretrained(checkpoint, local_files_only=local, **gguf)
    labels = 2 if task == "bc" else n_classes
    options = {}
    if finetune and hf_config.num_labels != labels and not (task == "bc" and hf_config.num_labels == 1):
        options = {"num_labels": labels, "ignore_mismatched_sizes": True}
    else:
        _check_task(task, hf_config.num_labels, n_classes, f"hf checkpoint {checkpoint!r}")
    if seed is not None:
        torch.manual_seed(seed)  # a new classifier head's initial weights
    if gguf_file is not None:  # every weight unpacked into a plain float32 model, whatever the file's types
        options |= {**gguf, "dtype": torch.float32, "quantization_config": GgufConfig(dequantize=True)}
    model = AutoModelForSequenceClassification.from_pretrained(checkpoint, local_files_only=local, **options)
    wrapped = wrap_pretrained(model, tokenizer, task=task, checkpoint=checkpoint)
    wrapped.config = replace(wrapped.config, gguf_file=gguf_file)
    return wrapped


def wrap_pretrained(model: nn.Module, tokenizer=None, task: str | None = None, checkpoint: str = "") -> HFClassifier:
    """An in-memory `transformers` sequence classifier as an `AttentionModel` (eval mode).

    `task=None`: "bc" for a model with 1 or 2 labels, otherwise "nli" (C classes, softmax); a QA model
    gives "qa" explicitly.
    """
    hf = model.config
    task = task or ("bc" if hf.num_labels in (1, 2) else "nli")
    n_classes = 2 if task == "bc" else hf.num_labels
    _check_task(task, hf.num_labels, n_classes, type(model).__name__)
    layers, heads, width = sizes(hf)
    causal = is_decoder_only(hf)
    if causal:
        with_padding(model, tokenizer)
    config = HFConfig(
        checkpoint=str(checkpoint or getattr(hf, "_name_or_path", "")),
        task=task,
        n_classes=n_classes,
        n_layers=layers,
        n_heads=heads,
        width=width,
        vocab_size=int(hf.vocab_size),
        model_type=hf.model_type,
        causal=causal,
        hf_config=hf.to_dict(),
    )
    return HFClassifier(model, config, tokenizer).eval()


def tokenizer_files(tokenizer) -> dict[str, bytes]:
    """The tokenizer as its save_pretrained files, so a checkpoint carries it."""
    with tempfile.TemporaryDirectory() as folder:
        tokenizer.save_pretrained(folder)
        return {p.name: p.read_bytes() for p in sorted(Path(folder).iterdir()) if p.is_file()}


def checkpoint_dict(model: HFClassifier, finetuned: bool, extra: dict | None = None) -> dict:
    """What `save_hf_model` writes: the config, the tokenizer's files and, for fine-tuned models, the weights
    (a model used as given is reloaded from its checkpoint)."""
    config = {**asdict(model.config), "finetuned": finetuned}
    weights = model.model.state_dict() if finetuned else None
    tokenizer = tokenizer_files(model.tokenizer) if model.tokenizer is not None else {}
    return {"kind": model.checkpoint_kind, "config": config, "state_dict": weights, "tokenizer": tokenizer, "extra": extra or {}}


def save_hf_model(model: HFClassifier, path, finetuned: bool, extra: dict | None = None) -> None:
    from attnexp.io import to_bytes, write_bytes

    # through a buffer (no temporary file name inside the archive), with a sha256 sidecar
    write_bytes(path, to_bytes(torch.save, checkpoint_dict(model, finetuned, extra)), checksum=True)


def from_checkpoint(checkpoint: dict) -> HFClassifier:
    """Rebuild a saved HF model: fine-tuned weights from the file, a model used as given from its source (its GGUF
    file where it was read from one)."""
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer, GgufConfig

    config = HFConfig(**checkpoint["config"])
    if config.kind != "classifier":
        from attnexp.models.hf.prompted import reload_prompted

        return reload_prompted(config)
    tokenizer = None
    if checkpoint.get("tokenizer"):
        with tempfile.TemporaryDirectory() as folder:
            for name, data in checkpoint["tokenizer"].items():
                (Path(folder) / name).write_bytes(data)
            tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    if checkpoint.get("state_dict") is not None:
        hf_config = dict(config.hf_config)
        hf_config.pop("_attn_implementation_autoset", None)
        hf_config.pop("quantization_config", None)  # a GGUF-read model's: its weights here are plain float32
        built = AutoConfig.for_model(hf_config.pop("model_type"), **hf_config)
        model = AutoModelForSequenceClassification.from_config(built)
        model.load_state_dict(checkpoint["state_dict"])
    else:
        problem = checkpoint_problem(config.checkpoint, gguf_file=config.gguf_file)
        if problem:
            raise FileNotFoundError(problem)
        gguf = {}
        if config.gguf_file is not None:
            gguf = {"gguf_file": config.gguf_file, "dtype": torch.float32, "quantization_config": GgufConfig(dequantize=True)}
        model = AutoModelForSequenceClassification.from_pretrained(config.checkpoint, local_files_only=True, **gguf)
    if config.causal:
        with_padding(model, tokenizer)
    return HFClassifier(model.eval(), config, tokenizer).eval()


def describe(model: HFClassifier) -> str:
    c = model.config
    return f"{c.model_type} {c.checkpoint!r}: {c.n_layers} layers x {c.n_heads} heads, width {c.width}, task {c.task}"
