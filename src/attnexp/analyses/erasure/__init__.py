"""Erasure tests of faithfulness: Serrano & Smith (2019), erasing attention weights, and ERASER (DeYoung et al.,
2020), erasing input tokens (comprehensiveness and sufficiency), for every ranking the pipeline computes.

The names below live here, not in the torch modules, so that the report jobs can read them without importing torch.
"""

BINS = (0.01, 0.05, 0.10, 0.20, 0.50)  # ERASER's bins: fractions of the real tokens kept or deleted
RANDOM = "random"  # the seeded baseline ranking
RATIONALE = "rationale"  # the planted ground truth (generated data only): the oracle row
ATTENTION_GRADIENT = "attention_gradient"  # d p_c / d alpha_t (Serrano & Smith)
ATTENTION_X_GRADIENT = "attention_x_gradient"  # alpha_t * d p_c / d alpha_t
JW_RANKINGS = ("attention", "gradient", "loo", "ig")  # the J&W importance table's measures
ATTENTION_COLUMNS = [  # the spec's, then the J&W output change (TVD; BC |dp|) beside the JSD
    "instance_id", "ranking", "n", "first_flip_fraction", "jsd_top", "jsd_random", "flip_top", "flip_random",
    "tvd_top", "tvd_random",
]  # fmt: skip
INPUT_COLUMNS = ["instance_id", "ranking", "k", "comprehensiveness", "sufficiency"]
