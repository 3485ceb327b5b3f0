"""The A&Z analysis settings (config section `az`, defaults in the schema); no torch, so that the workflow can
build them when it plans the jobs (`attnexp.pipeline.settings`)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class AZSettings:
    """The A&Z analysis options (config section `az`; defaults and allowed values in the schema)."""

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
