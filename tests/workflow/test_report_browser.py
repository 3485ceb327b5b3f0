"""The HTML report in a real browser: the `.test` grid's report (with a second J&W dataset, so that a search spans
datasets) in headless Chromium, driven by Playwright. Every category, subcategory, entry (the row itself, its eye
and its info button) is clicked; any page error, any entry without a file and any entry that opens another entry's
file fails. Issue 33 (finding 1): a row shows its file when clicked anywhere (attnexp's report stylesheet), the
info pane's "Job parameters" are short, and a table wider than its pane scrolls with its scroll bar on screen,
with and without the info pane open.

Debian's `chromium` (never a browser download: Playwright gets `executable_path`). The tests skip where it or
Playwright is absent, unless ATTNEXP_REQUIRE_BROWSER=1 (CI: .ci/run installs chromium and sets it)."""

import os
import shutil
import subprocess
import sys

import pytest
import yaml

from tests.conftest import REPO
from tests.workflow.helpers import local_env

REQUIRE_BROWSER = os.environ.get("ATTNEXP_REQUIRE_BROWSER") == "1"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
VIEWPORT = {"width": 1400, "height": 900}
# Whether the content pane (outside the navigation) shows exactly the file of result `path`.
SHOWN = """path => {
    const shown = [...document.querySelectorAll('img, iframe')].filter(el => !el.closest('nav'));
    return shown.length === 1 && shown[0].getAttribute('src') === results[path].data_uri;
}"""

pytestmark = pytest.mark.slow


def _missing() -> str | None:
    if CHROMIUM is None:
        return "no chromium on PATH (Debian: apt-get install chromium; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (requirements.txt pins it)"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _missing()
    if reason:
        if REQUIRE_BROWSER:
            pytest.fail(f"ATTNEXP_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory, browser) -> str:
    """The `.test` grid's report.html (its config, plus syn_nli beside syn_sentiment for J&W)."""
    workdir = tmp_path_factory.mktemp("report_browser")
    config = yaml.safe_load((REPO / ".test/config/config.yaml").read_text())
    config["datasets"] = ["syn_sentiment", "syn_nli"]
    config["hyperparameters"]["syn_nli"] = config["hyperparameters"]["syn_sentiment"]
    configfile = workdir / "config.yaml"
    configfile.write_text(yaml.safe_dump(config))
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), "--cores", "2"]
    done = subprocess.run(
        [*command, "report", "--configfile", str(configfile)],
        env=local_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return (workdir / "results/report.html").as_uri()


TABLE1 = "results/tables/jw/table1_datasets.html"
# Table 1 shown: its metric and score columns (every header before "|V|") end within the 1400 px window.
SCORE_EDGES = """() => {
    const heads = [...document.querySelectorAll('th')];
    return heads.slice(0, heads.findIndex(th => th.textContent === '|V|')).map(th => th.getBoundingClientRect().right);
}"""


# Any table: (the right edge of its first column after the labels, the pane's table wrapper: scrollable both ways,
# whether its content is wider than it, whether its bottom edge, where the horizontal scroll bar is, lies within the
# frame, and whether the header row stays in view). The label columns are those before the first holding a number.
TABLE_EDGES = """() => {
    const heads = [...document.querySelectorAll('th')];
    const cells = [...document.querySelectorAll('tbody tr:first-child td')];
    const first = Math.max(0, cells.findIndex(td => /\\d/.test(td.textContent)));
    const wrapper = document.querySelector('div.scroll');
    const style = wrapper && getComputedStyle(wrapper);
    return {
        result: heads.length ? heads[Math.min(first, heads.length - 1)].getBoundingClientRect().right : 0,
        scrolls: !!wrapper && style.overflowX === 'auto' && style.overflowY === 'auto',
        wider: !!wrapper && wrapper.scrollWidth > wrapper.clientWidth,
        bar_on_screen: !!wrapper && wrapper.getBoundingClientRect().bottom <= innerHeight,
        sticky_head: heads.length > 0 && getComputedStyle(heads[0]).position === 'sticky',
        rows: cells.length,
    };
}"""
# The info pane's "Job parameters" (the wildcards, then the params): the list items after that heading.
JOB_PARAMETERS = """() => {
    const items = [...document.querySelectorAll('nav li')];
    const at = items.findIndex(li => li.textContent === 'Job parameters');
    return at < 0 ? null : items.slice(at + 1).map(li => li.textContent).join(' ');
}"""
HEADINGS = "() => [...document.querySelectorAll('nav li.uppercase')].map(li => li.textContent)"
SHORT_PARAMETERS = 400  # characters: the defining settings, not the plan's file lists (there were thousands)


def row_label(row) -> str:
    """The labels a results row shows, as Snakemake joins them (its last cell holds the buttons)."""
    return ",".join(cell.strip() for cell in row.locator("td").all_inner_texts()[:-1])


class Session:
    """One browser tab on the report that counts page loads and clicks and collects page errors."""

    def __init__(self, browser, url: str):
        self.page = browser.new_page(viewport=VIEWPORT)
        self.url = url
        self.errors: list[str] = []
        self.pages = self.clicks = 0
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))

    def load(self) -> None:
        self.page.goto(self.url)
        self.page.get_by_role("link", name="Workflow").wait_for()
        self.pages += 1

    def click(self, locator, force: bool = False) -> None:
        locator.click(force=force)
        self.clicks += 1
        assert not self.errors, self.errors

    def menu(self, name: str):
        return self.page.locator("nav a", has_text=name).first

    def rows(self):
        return self.page.locator("nav table tbody tr")

    def open(self, category: str, subcategory: str) -> None:
        """The subcategory's page (a category with one subcategory opens it at once)."""
        self.load()
        self.click(self.menu(category))
        if self.page.evaluate("c => Object.keys(categories[c]).length", category) > 1:
            self.click(self.menu(subcategory))
        self.page.locator("nav table").wait_for()

    def show(self, path: str) -> None:
        """Click the eye of the row that shows `path`."""
        for i in range(self.rows().count()):
            row = self.rows().nth(i)
            if self.page.evaluate("([label, p]) => Object.values(results[p].labels).join(',') === label", [row_label(row), path]):
                self.click(row.get_by_role("link").first)
                return
        raise AssertionError(f"no row shows {path}")

    def scores_on_screen(self) -> bool:
        """Whether the table shown in the content pane (a data: iframe) has its score columns within the window."""
        pane = "() => [...document.querySelectorAll('iframe')].find(f => !f.closest('nav')).getBoundingClientRect().left"
        left = self.page.evaluate(pane)
        frame = next(f for f in self.page.frames if f.url.startswith("data:"))
        frame.wait_for_load_state()
        edges = frame.evaluate(SCORE_EDGES)
        return len(edges) > 2 and left + max(edges) <= VIEWPORT["width"]

    def table_readable(self, info: bool = False) -> tuple[bool, str]:
        """Whether the table shown in the content pane has its first result column within the window (unless the
        info pane is open, which halves the content pane), and scrolls both ways where it is wider or longer than
        the pane, its horizontal scroll bar within the window and its header row sticky (issue 33: wide tables were
        cut off at 1400 px, their scroll bar below the last row)."""
        pane = "() => [...document.querySelectorAll('iframe')].find(f => !f.closest('nav')).getBoundingClientRect().left"
        left = self.page.evaluate(pane)
        frame = next(f for f in self.page.frames if f.url.startswith("data:"))
        frame.wait_for_load_state()
        found = frame.evaluate(TABLE_EDGES)
        if not found["rows"]:
            return True, "no rows"
        on_screen = info or left + found["result"] <= VIEWPORT["width"]
        return found["scrolls"] and found["bar_on_screen"] and found["sticky_head"] and on_screen, str(found)

    def info(self, path: str) -> str:
        """Open the info pane of the row that shows `path` (its info button); its "Job parameters" text."""
        for i in range(self.rows().count()):
            row = self.rows().nth(i)
            if row_label(row) == self.page.evaluate("p => Object.values(results[p].labels).join(',')", path):
                self.click(row.get_by_role("link").nth(1))
                return self.page.evaluate(JOB_PARAMETERS) or ""
        raise AssertionError(f"no row shows {path}")

    def search(self, term: str) -> None:
        self.load()
        box = self.page.get_by_placeholder("Search...")
        box.fill(term)
        box.press("Enter")
        self.page.locator("nav table").wait_for()

    def entry_path(self, row, paths: list[str]) -> str:
        """The one result of `paths` (the page's) whose labels the row shows."""
        label = row_label(row)
        matches = self.page.evaluate(
            "([label, paths]) => paths.filter(p => Object.values(results[p].labels || {}).join(',') === label)",
            [label, paths],
        )
        assert len(matches) == 1, (label, matches)
        return matches[0]

    def check_rows(self, paths: list[str]) -> list[str]:
        """Click each row (entry) where its label is, then its eye: each time the row's file, one of `paths`, must
        show (an image or an HTML page; no two rows show one file, so an earlier row's cannot pass). Returns the
        rows' results."""
        shown = []
        for i in range(self.rows().count()):
            row = self.rows().nth(i)
            path = self.entry_path(row, paths)
            # the entry itself, where a reader clicks (force: the stretched eye link lies over the label, and
            # Playwright would otherwise wait for the label cell to be the topmost element)
            self.click(row.locator("td").first, force=True)
            assert self.page.evaluate(SHOWN, path), f"{path}: clicking its row does not show it"
            self.click(row.get_by_role("link").first)  # the eye
            assert self.page.evaluate(SHOWN, path), path
            shown.append(path)
        return shown


def test_every_category_subcategory_and_entry_opens(browser, report):
    session = Session(browser, report)
    session.load()
    categories = session.page.evaluate("Object.fromEntries(Object.entries(categories).map(([c, s]) => [c, s]))")
    seen, tables = [], 0
    for category, subcategories in sorted(categories.items()):
        for subcategory, paths in sorted(subcategories.items()):
            session.open(category, subcategory)
            assert not session.page.locator("nav input[type=radio]").count(), "a label became a toggle"
            shown = session.check_rows(paths)
            assert sorted(shown) == sorted(paths), (category, subcategory)  # no merged rows, none without a file
            if TABLE1 in paths:
                session.show(TABLE1)
                assert session.scores_on_screen(), "Table 1's score columns are off-screen at 1400 px"
            for table in (p for p in paths if p.startswith("results/tables/") and p.endswith(".html")):
                session.show(table)  # every table: its results on screen at 1400 px, the rest reachable by scrolling
                readable, found = session.table_readable()
                assert readable, f"{table}: {found}"
                session.info(table)  # and beside the info pane, which takes half the window
                readable, found = session.table_readable(info=True)
                assert readable, f"{table} with its info pane open: {found}"
                session.open(category, subcategory)
                tables += 1
            for path in paths:  # every entry's info button: its description first, its job parameters short
                session.open(category, subcategory)
                parameters = session.info(path)
                headings = session.page.evaluate(HEADINGS)
                assert headings[:1] == ["Description"], (path, headings)
                assert len(parameters) <= SHORT_PARAMETERS and "results/" not in parameters, (path, parameters)
            seen += shown
    total = session.page.evaluate("Object.keys(results).length")
    assert len(seen) == total and not session.errors
    assert tables >= 10  # J&W's four, W&P's, A&Z's, the erasure tests' and the comparison
    print(f"report in Chromium: {session.pages} page loads, {session.clicks} clicks, {total} entries, {tables} tables")


def test_searching_a_figure_name_returns_every_datasets_entry(browser, report):
    session = Session(browser, report)
    session.load()
    paths = session.page.evaluate("Object.keys(results)")
    names = sorted({p.rsplit("/", 1)[-1].removesuffix(".png") for p in paths if p.endswith(".png")})
    datasets = {"syn_sentiment", "syn_nli"}
    across = 0
    for name in names:
        session.search(name)
        expected = sorted(p for p in paths if name in p)
        assert sorted(session.check_rows(expected)) == expected, name
        labels = [session.rows().nth(i).inner_text() for i in range(session.rows().count())]
        for dataset in {p.split("/")[3] for p in expected} & datasets:
            assert any(label.startswith(f"{dataset} · ") for label in labels), (name, dataset, labels)
        across += {p.split("/")[3] for p in expected} >= datasets
    assert across >= 9  # the per-model J&W figures of both datasets
    assert not session.errors
    print(f"report searches in Chromium: {len(names)} figure names, {session.pages} page loads, {session.clicks} clicks")
