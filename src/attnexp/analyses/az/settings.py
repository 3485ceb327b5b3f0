"""The Abnar & Zuidema analyses: read raw / rollout / flow relevance at every layer of a trained Transformer,
compute blank-out and gradient importance, correlate them (Spearman per example, §5), score how well each
method finds the subject on agreement data, and combine the per-seed summaries. Tables and figures are drawn
in `attnexp.report.az`.
"""

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import ClassVar


@dataclass(frozen=True)
class AZSettings:
    """The A&Z analysis options (config section `az`; defaults and allowed values in the schema)."""

    CONFIG_KEY: ClassVar[str] = "az"

    n_examples: int  # test examples sampled for the analysis; 0 or more than the test set: all
    sample_seed: int
    batch_size: int
    relevance_row: str  # cls | max_over_rows
    score: str  # prob_gold | logit_label
    gradient: str  # grad | grad_x_input: the gradient importance shown in tables and figures
    spearman: str  # scipy | dense_rank_formula
    nan_policy: str  # zero | omit
    exclude_special: bool
    cumulative_layer_lists: bool
    flow_solver: str  # scipy | networkx
    rollout_residual: bool

    @classmethod
    def from_config(cls, config: Mapping) -> "AZSettings":
        """From the validated config (the schema has filled every default)."""
        section = config[cls.CONFIG_KEY]
        return cls(**{field.name: section[field.name] for field in fields(cls)})
