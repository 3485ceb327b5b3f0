"""The house rules of the package's imports, read from the source with `ast`: each concern imports only the ones
below it (datasets < data < models < analyses < report), no import cycle, analyses never draw, the library never
imports Snakemake, W&P uses J&W's per-instance layer but never its job; and the hallway (issue "One door from the
workflow into the library"): workflow scripts call only `attnexp.pipeline`, jobs (`run_*`) live there alone with
one signature, the pipeline imports no torch at import, and the domain packages read no config."""

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
    if name.startswith("attnexp.pipeline"):  # the workflow's door into the library, beside the API
        return len(LAYERS)
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


# --- the hallway: workflow scripts -> attnexp.pipeline -> the domain packages ---

SCRIPTS = PACKAGE.parents[1] / "workflow" / "scripts"


def test_workflow_scripts_call_only_the_pipeline():
    """Every script imports attnexp.pipeline (and nothing else of ours or anyone's) and calls one job by name."""
    for script in sorted(SCRIPTS.glob("*.py")):
        modules = imported(script, "workflow.scripts." + script.stem)
        roots = {m for m in modules if not m.startswith("attnexp.pipeline")}
        assert roots == set(), f"{script.name} imports {sorted(roots)}"
        assert "call(run_" in script.read_text(), script.name


def test_job_entry_points_live_in_the_pipeline_only(graph):
    """`run_*` functions are the jobs' entry points: defined in attnexp.pipeline, nowhere else in the library."""
    outside = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "pipeline":
            continue
        tree = ast.parse(path.read_text())
        outside += [f"{path.name}:{n.name}" for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("run_")]
    assert outside == []


def test_every_job_entry_point_has_the_one_signature():
    import importlib
    import inspect

    for path in sorted((PACKAGE / "pipeline").glob("*.py")):
        module = importlib.import_module(module_name(path))
        jobs = [f for name, f in vars(module).items() if name.startswith("run_") and inspect.isfunction(f)]
        for job in jobs:
            if job.__module__ != module.__name__:
                continue
            parameters = inspect.signature(job).parameters
            assert list(parameters) == ["inputs", "outputs", "settings", "threads"], job.__name__
            assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values()), job.__name__


def test_the_pipeline_loads_no_torch_pandas_or_matplotlib_at_import():
    import subprocess
    import sys

    modules = sorted(module_name(p) for p in (PACKAGE / "pipeline").glob("*.py"))
    code = f"import sys\nfor m in {modules!r}: __import__(m)\n"
    code += "print(sorted(m for m in ('torch', 'pandas', 'numpy', 'matplotlib', 'snakemake') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_domain_packages_read_no_config(graph):
    """Settings reach the library one way: the pipeline builds them. No domain module imports the config reader
    (attnexp.config) or the pipeline, and none defines a `from_config`."""
    for name in graph:
        if name.count(".") and name.split(".")[1] in LAYERS:
            assert not graph.has_edge(name, "attnexp.config"), name
            assert not any(m.startswith("attnexp.pipeline") for m in graph.nodes[name]["external"]), name
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] in LAYERS:
            assert "def from_config" not in path.read_text(), path
