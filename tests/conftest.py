"""Shared fixtures: the repository, the real datasets in ../shared/data, tiny generated data."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")  # figures draw headless: set before anything imports matplotlib

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    """../shared/data beside the checkout (CI), or $ATTNEXP_SHARED_DATA."""
    candidates = [os.environ.get("ATTNEXP_SHARED_DATA"), REPO.parent / "shared" / "data"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if path is None:
        pytest.skip("the real datasets (../shared/data) are not available")
    return path


# The longest modules first (wall seconds per module in a two-worker run, 2026-12-02): `make test` spreads whole
# modules over two workers (pytest-xdist, `--dist loadscope`, so a module's fixtures run once), and starting the long
# ones first lets both workers finish together. An unlisted module keeps its place after these.
LONGEST_FIRST = (
    "workflow/test_workflow.py",  # ~290 s: the tiny grid and what a run leaves behind
    "workflow/test_documented_commands.py",  # ~250 s: ~50 dry runs
    "workflow/test_report_browser.py",  # ~205 s: a grid, its report, 80 page loads in chromium
    "workflow/test_slurm.py",  # ~165 s: a local and a SLURM tiny grid, much of it the scheduler's polling
    "workflow/test_failure_probes.py",  # ~135 s
    "workflow/test_hf_workflow.py",  # ~120 s: three tiny Hugging Face models in one run
    "workflow/test_figures_workflow.py",
    "analyses/az/test_az.py",
    "datasets/test_datasets.py",
)


def _module_rank(item) -> int:
    relative = Path(item.path).relative_to(REPO / "tests").as_posix()
    return LONGEST_FIRST.index(relative) if relative in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(config, items):
    """Every test of tests/workflow/ runs the workflow through Snakemake's command line (dry runs included), so it is
    `slow`: `make test` runs it, the edit loop's `make test-fast` (`-m "not slow and not slurm"`) does not. The
    longest modules move to the front (a stable sort: each module's own order is kept)."""
    workflow = REPO / "tests" / "workflow"
    for item in items:
        if workflow in Path(item.path).parents:
            item.add_marker(pytest.mark.slow)
    items.sort(key=_module_rank)


@pytest.fixture(autouse=True)
def _single_thread():
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def planted_sentiment(tmp_path_factory):
    """A small planted-rationale classification set, preprocessed."""
    from attnexp.data.preprocess import preprocess
    from attnexp.datasets import get_dataset
    from tests.factories import synthetic_data

    raw = tmp_path_factory.mktemp("sentiment")
    synthetic_data("sentiment", raw, seed=7, vocab_size=300, min_len=5, max_len=20)
    return preprocess(get_dataset("syn_sentiment"), raw)


@pytest.fixture(scope="session")
def planted_nli(tmp_path_factory):
    from attnexp.data.preprocess import preprocess
    from attnexp.datasets import get_dataset
    from tests.factories import synthetic_data

    raw = tmp_path_factory.mktemp("nli")
    synthetic_data("nli", raw, seed=7, sizes={"train": 60, "dev": 30, "test": 30}, vocab_size=100, min_len=3, max_len=12)
    return preprocess(get_dataset("syn_nli"), raw)
