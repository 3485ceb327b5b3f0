"""The registry of the built-in datasets (attnexp.datasets.registry) and the layering of the datasets package."""

import subprocess
import sys

from attnexp.datasets import DATASETS
from attnexp.datasets.generated.synthetic import FAMILY_FILES


def test_every_generated_dataset_reads_files_its_family_writes():
    for spec in DATASETS.values():
        if spec.synthetic in FAMILY_FILES:
            assert set(spec.layouts["synthetic"].values()) <= set(FAMILY_FILES[spec.synthetic]), spec.name


def _imported(statement: str) -> list[str]:
    code = f"import sys; {statement}; print(' '.join(m for m in sys.modules if m.startswith('attnexp')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.split()


def test_the_registry_does_not_import_the_generators():
    assert not [m for m in _imported("import attnexp.datasets") if m.startswith("attnexp.datasets.generated")]
