"""The papers' order of datasets and of the report's sections; import-light (no pandas) so that the workflow can
use it at parse time to order the HTML report."""

from collections.abc import Sequence

PAPER_ORDER = ("sst", "imdb", "adr", "agnews", "20news", "diabetes", "anemia", "cnn", "babi1", "babi2", "babi3", "snli")
ALIASES = {"sentiment": "sst", "nli": "snli"}  # the generated offline stand-ins (syn_sentiment, syn_nli)
# The report's sections (Snakemake sorts categories by name, so the number fixes the papers' order).
PAPER_SECTIONS = {
    "jw": "1. Jain & Wallace (2019)",
    "wp": "2. Wiegreffe & Pinter (2019)",
    "az": "3. Abnar & Zuidema (2020)",
    "erasure": "4. Erasure tests: Serrano & Smith (2019), ERASER (2020)",
    "comparison": "5. All papers: ours vs published",
}
ALL_DATASETS = "All datasets"


def dataset_order(names: Sequence[str]) -> list[str]:
    """The paper's dataset order (SST, IMDB, …, SNLI); names it does not know keep their given order, last."""

    def rank(name: str) -> int:
        stem = name.removeprefix("syn_")
        stem = ALIASES.get(stem, stem)
        matches = [i for i, key in enumerate(PAPER_ORDER) if stem == key or stem.startswith(f"{key}_")]
        return matches[0] if matches else len(PAPER_ORDER)

    return sorted(dict.fromkeys(names), key=rank)


def dataset_sections(names: Sequence[str]) -> dict[str, str]:
    """Report subcategory per dataset: `{n}. {dataset}` in the papers' order after `0. All datasets`, zero-padded
    so that Snakemake's sort by name keeps it."""
    width = len(str(len(names)))
    return {ALL_DATASETS: f"{0:0{width}d}. {ALL_DATASETS}"} | {
        name: f"{i:0{width}d}. {name}" for i, name in enumerate(dataset_order(names), start=1)
    }


def entry_label(dataset: str, model: str, result: str) -> dict[str, str]:
    """A report entry's labels: one, "dataset · model · result" (no model part where `model` is "-", no dataset
    part for ALL_DATASETS, whose entries are one of a kind). Snakemake's report makes any label after the first a
    toggle when it has two values on half a page's entries, which leaves rows without a file; a single label
    cannot, and naming the dataset keeps every search result its own row."""
    parts = (dataset if dataset != ALL_DATASETS else "-", model, result)
    return {"dataset · model · result": " · ".join(part for part in parts if part != "-")}
