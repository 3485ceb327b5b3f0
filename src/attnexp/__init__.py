"""Can attention weights explain a neural model's predictions? A reproducible toolkit.

Reproduces Jain & Wallace (2019), Wiegreffe & Pinter (2019) and Abnar & Zuidema (2020).
The library has no Snakemake imports: every function is usable from a notebook. The public API
(`attnexp.api`, docs/api.md) is loaded on first use, so `import attnexp.paths` stays light.
"""

import importlib

__version__ = "0.1.0"

__all__ = [
    "Explanation",
    "HuggingFaceTokenizer",
    "Run",
    "TextTokenizer",
    "TokenizedText",
    "VocabularyTokenizer",
    "as_attention_model",
    "as_tokenizer",
    "default_settings",
    "encode_text",
    "explain",
    "heatmap",
    "load_run",
]


def __getattr__(name: str):
    """PEP 562: the API's names on first access (the API imports torch and every analysis)."""
    if name in __all__:
        return getattr(importlib.import_module("attnexp.api"), name)
    raise AttributeError(f"module 'attnexp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
