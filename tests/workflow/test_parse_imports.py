"""The workflow parses in a plain Snakemake environment (`snakemake --sdm conda`): what the Snakefile and its
rule files import at parse time must not load the scientific stack, which only the jobs' environment has."""

import re
import subprocess
import sys

from tests.conftest import REPO

HEAVY = ("torch", "pandas", "numpy", "scipy", "sklearn", "matplotlib", "spacy", "pyarrow")


def parse_time_imports() -> list[str]:
    """Every top-level `import` / `from ... import` statement of the Snakefile and workflow/rules/*.smk."""
    statements = []
    for path in [REPO / "Snakefile", REPO / "workflow/Snakefile", *sorted((REPO / "workflow/rules").glob("*.smk"))]:
        text = path.read_text()
        statements += re.findall(r"^(?:from \S+ import \([^)]*\)|from \S+ import [^\n]+|import [^\n]+)", text, re.M)
    return statements


def test_snakefile_imports_load_no_scientific_stack():
    statements = parse_time_imports()
    assert any("attnexp.datasets" in s for s in statements)  # the registry, which once pulled in pandas
    code = "\n".join([*statements, "import sys", f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"])
    env_path = str(REPO / "src")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": env_path}, check=True)
    assert done.stdout.strip() == "[]", f"parse-time imports load {done.stdout.strip()}"
