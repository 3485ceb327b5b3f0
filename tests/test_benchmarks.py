"""Every benchmark script imports (a renamed or removed library function fails here, not in a user's hands),
and none does its work on import. A script imports the folder's helper modules (`_*.py`, not scripts) as it does
when run: benchmarks/ first on the path."""

import ast
import importlib.util

import pytest

from tests.conftest import REPO

SCRIPTS = sorted(path for path in (REPO / "benchmarks").glob("*.py") if not path.name.startswith("_"))


def _main_guarded(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"' for node in tree.body
    )


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_benchmark_imports(script, monkeypatch):
    monkeypatch.syspath_prepend(str(script.parent))
    assert _main_guarded(ast.parse(script.read_text())), f"{script.name}: put the work under `if __name__ == '__main__':`"
    spec = importlib.util.spec_from_file_location(f"benchmark_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(getattr(module, "main", None)), f"{script.name} has no main()"
