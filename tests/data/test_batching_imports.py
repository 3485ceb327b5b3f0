"""The data layer's imports: batching needs only the vocabulary, never a dataset reader."""

import subprocess
import sys


def test_batching_imports_no_dataset_reader():
    code = "import attnexp.data.batching, sys; assert not any(m.startswith('attnexp.datasets') for m in sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)
