"""Every report entry of the workflow gets its one label from report_entries.smk's helpers (attnexp.report.order
.entry_label): a second label could become a toggle in Snakemake's report and leave a row without a file."""

import re

from tests.conftest import REPO


def test_report_entries_are_labelled_only_through_the_helpers():
    rules = {path.name: path.read_text() for path in (REPO / "workflow/rules").glob("*.smk")}
    assert all("in_report(" not in text for name, text in rules.items() if name != "report_entries.smk")
    assert all(not re.search(r"^\s*report\(", text, re.M) for text in rules.values())  # the global directive only
    helpers = rules["report_entries.smk"]
    assert helpers.count("in_report(") == 2 and helpers.count("labels=report_labels(") == 2
    assert "labels=" not in "".join(text for name, text in rules.items() if name != "report_entries.smk")
