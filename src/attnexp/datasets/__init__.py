"""The dataset registry: every dataset the pipeline knows, with its task, raw files and hyperparameters."""

from attnexp.datasets.registry import DATASETS, DatasetSpec, get_dataset

__all__ = ["DATASETS", "DatasetSpec", "get_dataset"]
