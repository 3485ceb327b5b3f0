"""The house rules of the package's imports (issue "One house for three papers"), read from the source with `ast`:
each concern imports only the ones below it (datasets < data < models < analyses < report), no import cycle,
analyses never draw, the library never imports Snakemake, W&P uses J&W's per-instance layer but never its driver."""

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "attnexp"
LAYERS = ("datasets", "data", "models", "analyses", "report")  # bottom to top; top-level modules sit below all
TOP = {"attnexp.config", "attnexp.api"}  # the config validates against the registry; the API uses every layer


def module_name(path: Path) -> str:
    parts = ["attnexp", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, name: str) -> set[str]:
    """Every module `path` imports (inside functions too), as absolute names."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return found


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    g = nx.DiGraph()
    for name, path in modules.items():
        g.add_node(name, external=imported(path, name))
        g.add_edges_from((name, other) for other in imported(path, name) if other in modules and other != name)
    return g


def layer(name: str) -> int:
    if name in TOP:
        return len(LAYERS)
    if name.startswith("attnexp.pipeline"):  # the workflow's door into the library sits above every concern
        return len(LAYERS) + 1
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else -1


def test_no_import_cycle(graph):
    assert list(nx.simple_cycles(graph)) == []


def test_nothing_imports_upwards(graph):
    upward = [(a, b) for a, b in graph.edges if layer(a) < layer(b)]
    assert upward == []


def test_analyses_never_draw_and_the_library_never_imports_snakemake(graph):
    for name, external in graph.nodes(data="external"):
        roots = {module.split(".")[0] for module in external}
        assert "snakemake" not in roots, name
        if name.startswith(("attnexp.analyses", "attnexp.models", "attnexp.data")):
            assert not roots & {"matplotlib", "seaborn"}, name
            assert not any(m.startswith("attnexp.report") for m in external), name


def test_wp_uses_the_jw_per_instance_layer_never_its_driver(graph):
    wp = [n for n in graph if n.startswith(("attnexp.analyses.wp", "attnexp.pipeline.wp"))]
    assert all(not graph.has_edge(n, "attnexp.pipeline.jw") for n in wp)
    assert any(graph.has_edge(n, "attnexp.analyses.jw.instances") for n in wp)
