"""The guide (issue 33): a short README, and a documentation site whose strict build fails on a broken link or anchor."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None, reason="mkdocs")

MKDOCS = str(Path(sys.executable).parent / "mkdocs")


def _build(root: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [MKDOCS, "build", "--strict", "--site-dir", str(site)], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


def _scratch_copy(tmp_path: Path) -> Path:
    """What the site build reads: mkdocs.yml, docs/, the included config/README.md and src/ (for the API reference)."""
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy2(REPO / "mkdocs.yml", root / "mkdocs.yml")
    for folder in ("docs", "src"):
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "config").mkdir()
    shutil.copy2(REPO / "config/README.md", root / "config/README.md")
    return root


def _nav_pages(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return [page for item in nav for page in _nav_pages(item)]


def test_the_site_builds_strictly_with_every_page_and_the_api_reference(tmp_path):
    result = _build(REPO, tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    nav = _nav_pages(yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"])
    assert sorted(nav) == sorted(p.name for p in (REPO / "docs").glob("*.md")), "every page is in the nav, once"
    reference = (tmp_path / "site/reference/index.html").read_text()
    for name in ("load_run", "explain", "heatmap", "AttentionModel"):
        assert 'id="attnexp.' in reference and name in reference, name
    configuration = (tmp_path / "site/configuration/index.html").read_text()
    assert "user_datasets" in configuration and "--8&lt;--" not in configuration, "config/README.md is included"


@pytest.mark.parametrize(
    "page, good, bad",
    [
        ("abnar-zuidema.md", "(huggingface.md)", "(huggingface-models.md)"),  # a page that does not exist
        ("paper-grid.md", "#measured-on-a-gpu-issue-20-6)", "#measured-on-a-gpu)"),  # an anchor that does not exist
    ],
)
def test_a_broken_link_fails_the_strict_build(tmp_path, page, good, bad):
    root = _scratch_copy(tmp_path)
    path = root / "docs" / page
    text = path.read_text()
    assert good in text
    path.write_text(text.replace(good, bad, 1))
    result = _build(root, tmp_path / "site")
    assert result.returncode != 0
    assert bad.strip("()#") in result.stderr, result.stderr[-2000:]


def test_the_readme_is_a_newcomers_page():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    assert not re.search(r"`[0-9a-f]{7}`", text), "no commit ids in the README: they belong on the performance page"
    for command in ("make run", "make test", "make report", "make docs"):
        assert command in text
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (REPO / link).is_file(), link
