"""The plan's data: raw files, generated families, preprocessed datasets and word vectors."""

from attnexp import paths
from attnexp.datasets.generated.synthetic import FAMILY_FILES
from attnexp.pipeline import policy
from attnexp.pipeline.plans.core import PlanCore


class DataPlan:
    """Where each dataset's files come from and go."""

    def __init__(self, core: PlanCore) -> None:
        self.core = core

    def raw_files(self, dataset: str) -> dict[str, str]:
        """Role -> path of the raw files a dataset's preprocessing reads (resolved once, here, for the rule's
        inputs; generated files come from the rule of their family)."""
        return policy.raw_files(policy.spec_of(dataset, self.core.specs), self.core.config["data"], self.core.basedir)

    def raw_dir(self, dataset: str) -> str | None:
        """Where a dataset's raw files lie (their SHA256SUMS too); None for files named in the config."""
        return policy.raw_dir(policy.spec_of(dataset, self.core.specs), self.core.config["data"], self.core.basedir)

    def synthetic_files(self, family: str) -> dict[str, str]:
        """The files one generated family writes (`synthesize_{family}`), by file name."""
        folder = paths.SYNTHETIC.format(family=family)
        return {name: f"{folder}/{name}" for name in FAMILY_FILES[family]}

    def dataset_targets(self) -> list[str]:
        return [paths.preprocessed_files(d)["meta"] for d in self.core.datasets]

    def vectors_inputs(self, dataset: str) -> dict[str, str]:
        """{"vectors": the word-vector file} of a dataset's classifier runs (J&W and W&P), an input of their jobs so
        that `official` in download mode runs its download rule first; {} for random init or a packaged substitute
        (read from the installed package)."""
        chosen = policy.embeddings(dataset, self.core.config["data"], self.core.basedir, self.core.specs)
        return {"vectors": chosen["path"]} if chosen and chosen["path"] else {}

    def train_inputs(self, dataset: str) -> dict[str, str]:
        """A J&W grid model's inputs: the preprocessed dataset and its word vectors (`vectors_inputs`)."""
        return {**paths.preprocessed_files(dataset), **self.vectors_inputs(dataset)}
