"""Preprocess every dataset available in a raw-data directory; print sizes, class counts, |V| and seconds.

PYTHONPATH=src python benchmarks/preprocess_datasets.py [RAW_DIR (default: ../shared/data beside the checkout)] [dataset ...]
"""

import sys
import time
from pathlib import Path

from attnexp.data.preprocess import preprocess
from attnexp.datasets import DATASETS
from attnexp.datasets.acquire import missing_data


def main(raw_dir: str, names: list[str]) -> None:
    for name in names or [n for n, s in DATASETS.items() if not s.synthetic]:
        spec = DATASETS[name]
        problem = missing_data(spec, raw_dir)
        if problem or spec.user_files:
            print(f"{name}: skipped ({problem or 'user-supplied data'})", flush=True)
            continue
        start = time.perf_counter()
        _, meta = preprocess(spec, raw_dir)
        seconds = time.perf_counter() - start
        print(
            f"{name}: sizes {meta['sizes']} before filter {meta['sizes_before_filter']} class counts "
            f"{meta['class_counts']} |V| {len(meta['vocab'])} classes {len(meta['classes'])} "
            f"mean length {meta['mean_length']:.1f} comparable {meta['comparable']} {seconds:.1f}s",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).resolve().parents[2] / "shared" / "data"), sys.argv[2:])
