"""The J&W analyses' settings (config section `analyses`, defaults in the schema) and the adversary's thresholds;
no torch, so that the workflow can build them when it plans the jobs (`attnexp.pipeline.settings`)."""

from dataclasses import dataclass

PAPER_EPSILON = {"bc": 0.01, "qa": 0.05, "nli": 0.05}
CODE_EPSILON = 0.01  # quirk: hinge threshold of the authors' code, on |dp| (BC) or the L1 distance (QA/NLI)
CODE_REPORT_EPSILON = 0.05  # quirk: the authors' reporting threshold for every task


@dataclass(frozen=True)
class AdversarySettings:
    """Config section `analyses.adversary` (defaults in the schema); `lam` is the key `lambda`."""

    candidates: int
    steps: int
    lr: float
    lam: float
    code_thresholds: bool  # quirk: the authors' hinge (0.01 on |dp| or L1) and report threshold (0.05)
    init_scale: float = 3.0  # not a config key: the authors' N(0, 1) scale of the initial logits

    def hinge_epsilon(self, task: str) -> float:
        return CODE_EPSILON if self.code_thresholds else PAPER_EPSILON[task]

    def report_epsilon(self, task: str) -> float:
        return CODE_REPORT_EPSILON if self.code_thresholds else PAPER_EPSILON[task]


@dataclass(frozen=True)
class TestSample:
    """Config section `analyses.test_sample`: at most `n` test instances per model (None: all), drawn with `seed`."""

    __test__ = False  # not a pytest test class

    n: int | None
    seed: int


@dataclass(frozen=True)
class AnalysisSettings:
    """Config section `analyses` (J&W §6; defaults in the schema) plus the batch size, which is the model's training
    batch size (J&W) and so comes from the wildcard's dataset, not from this section."""

    batch_size: int
    permutations: int
    ig_steps: int | None  # None: IG not computed (NaN column)
    memory_budget_mb: float
    bc_loo: bool  # quirk: false (the released code skips LOO for BC)
    nan_policy: str  # `analyses.kendall.nan_policy`; quirk: propagate
    adversary: AdversarySettings
    device: str  # the top-level `device` (resolved in the job; not recorded: CPU outputs do not depend on it)
    padded_lstm: bool  # top-level `padded_lstm`: BiLSTMs over the padded batch (false: torch's packed sequences)
    test_sample: TestSample  # `analyses.test_sample`: which test instances the job analyses (`sample`)

    def sample(self, rows):
        """The analysed instances of a model's test split `rows`: all, or the seeded sample (order kept)."""
        from attnexp.data.sampling import seeded_sample

        return seeded_sample(rows, self.test_sample.n, self.test_sample.seed)
