"""What a transformers architecture is and can serve, read from its config alone (no weights): decoder-only or not,
its sizes, whether a pass fed the last layer's input can run that layer alone, whether it serves a model kind, and a
decoder tokenizer's padding. transformers is imported only inside the functions that need it."""

# Model types whose fed module's output (`HFClassifier.embeddings`) enters the layer stack as it is, so that a pass
# fed the last layer's input through it runs that layer alone (BERT-family: the embeddings module; Llama-family:
# embed_tokens, with rotary positions inside the layers). Others (GPT-2 adds its position embeddings after `wte`)
# decode by rerunning every layer.
FED_STRAIGHT = frozenset({"bert", "distilbert", "roberta", "xlm-roberta", "llama", "mistral", "qwen2", "qwen3"})


def is_decoder_only(hf_config) -> bool:
    """Whether a transformers config is a decoder-only LM's (GPT-2, Llama, Qwen, ...)."""
    return decoder_only_type(hf_config.model_type)


def decoder_only_type(model_type: str) -> bool:
    """Whether a transformers model type is a decoder-only LM's: a causal LM type that is not also a masked LM (BERT
    and RoBERTa are both)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_FOR_MASKED_LM_MAPPING_NAMES

    return model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES


def with_padding(model, tokenizer) -> None:
    """A decoder's tokenizer without a pad token gets its EOS as pad, and the model's config the same id (its own
    pooling needs one for batches; our logits are read at q whatever it is)."""
    if tokenizer is not None and getattr(tokenizer, "pad_token", None) is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token
    if getattr(model.config, "pad_token_id", None) is None:
        pad = getattr(tokenizer, "pad_token_id", None) if tokenizer is not None else None
        model.config.pad_token_id = pad if pad is not None else getattr(model.config, "eos_token_id", 0)


def sizes(hf) -> tuple[int, int, int]:
    layers = getattr(hf, "num_hidden_layers", None) or getattr(hf, "n_layers", None) or hf.n_layer
    heads = getattr(hf, "num_attention_heads", None) or getattr(hf, "n_heads", None) or hf.n_head
    width = getattr(hf, "hidden_size", None) or getattr(hf, "dim", None) or hf.n_embd
    return int(layers), int(heads), int(width)


def architecture_problem(kind: str, model_type: str) -> str | None:
    """Whether a checkpoint's architecture (`model_type` of its config.json) can serve `kind`; None if it can."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES,
    )

    if kind == "masked_lm" and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return f"a {model_type!r} checkpoint is not a masked LM; use kind: prompted (a decoder) or classifier"
    if kind == "prompted" and not decoder_only_type(model_type):
        return f"a {model_type!r} checkpoint is not a decoder-only LM; use kind: masked_lm (BERT-family) or classifier"
    if kind == "classifier" and model_type not in MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES:
        return f"transformers has no sequence classifier for {model_type!r}; use kind: prompted or masked_lm"
    return None
