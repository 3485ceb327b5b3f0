"""The erasure tests' settings (config section `analyses.erasure`, defaults in the schema); no torch."""

from dataclasses import dataclass


@dataclass(frozen=True)
class ErasureSettings:
    """`analyses.erasure` without its `enabled` switch (a disabled section gives no settings at all)."""

    bins: tuple[float, ...]  # ERASER's fractions k of the real tokens (AOPC averages over them)
    memory_budget_mb: float  # `analyses.memory_budget_mb`: chunks of erased inputs and attentions
