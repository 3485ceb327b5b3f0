"""The HTML report's sections follow the papers: Snakemake sorts categories and subcategories by name, so the
names carry the order (J&W, W&P, A&Z; all datasets, then the datasets in the papers' order)."""

from attnexp.report.order import ALL_DATASETS, PAPER_SECTIONS, dataset_sections


def test_paper_sections_sort_in_publication_order():
    assert [key for key, _ in sorted(PAPER_SECTIONS.items(), key=lambda item: item[1])] == [
        "jw",
        "wp",
        "az",
        "erasure",
        "comparison",
    ]
    assert "Jain & Wallace" in PAPER_SECTIONS["jw"] and "Abnar & Zuidema" in PAPER_SECTIONS["az"]


def test_dataset_sections_sort_in_the_papers_order_with_all_datasets_first():
    names = ["snli", "babi1", "syn_agreement", "imdb", "sst", "20news", "agnews", "adr", "diabetes", "anemia", "cnn", "babi2"]
    sections = dataset_sections(names)
    by_name = sorted(sections, key=sections.get)
    assert by_name[0] == ALL_DATASETS
    papers = ["sst", "imdb", "adr", "agnews", "20news", "diabetes", "anemia", "cnn", "babi1", "babi2", "snli"]
    assert by_name[1:] == [*papers, "syn_agreement"]
    assert sections["sst"] == "01. sst" and sections[ALL_DATASETS] == "00. All datasets"  # padded: 12 datasets


def test_a_report_entry_has_one_label_naming_its_dataset():
    """One label: Snakemake's report makes a second label a toggle when it has two values on half a page's
    entries (the A&Z page then crashed); the dataset keeps a search's rows of different datasets apart."""
    from attnexp.report.order import entry_label

    assert entry_label("syn_nli", "lstm-tanh seed 0", "Adversary histogram") == {
        "dataset · model · result": "syn_nli · lstm-tanh seed 0 · Adversary histogram"
    }
    assert entry_label("All datasets", "-", "Table 1") == {"dataset · model · result": "Table 1"}
