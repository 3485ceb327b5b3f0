"""The house rules of the package's imports, read from the source with `ast`: each concern imports only the ones
below it (datasets < data < models < analyses < report), no import cycle, analyses never draw, the library never
imports Snakemake, W&P uses J&W's per-instance layer but never its job; and the hallway (issue "One door from the
workflow into the library"): workflow scripts call only `attnexp.pipeline`, jobs (`run_*`) live there alone with
one signature, the pipeline imports no torch at import, and the domain packages read no config; the rule files
(Snakefile, workflow/Snakefile, workflow/rules/*.smk) import of the library only attnexp.pipeline and an allow-list of
parse-time modules, none of which loads torch, pandas, numpy or matplotlib (issue 34, "Side doors")."""

import ast
import re
import textwrap
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


# --- the rule files: attnexp.pipeline, plus what the workflow needs at parse time ---

ROOT = PACKAGE.parents[1]
RULE_FILES = [ROOT / "Snakefile", ROOT / "workflow" / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
# What a rule file may import of the library besides attnexp.pipeline.*: modules read while Snakemake parses the
# workflow (rule names, wildcards, paths, resources, report entries, console handlers), each import-light.
RULE_FILE_IMPORTS = {
    "attnexp.config": "validates the config (and its files' syntax) before any job; a ConfigError stops the workflow",
    "attnexp.paths": "every path the workflow writes, named once: the rules' inputs, outputs and logs",
    "attnexp.runconsole": "the onstart handler on Snakemake's job events: one console line per finished or failed job",
    "attnexp.runsummary": "the onstart / onsuccess / onerror banners and the closing summary of the run",
    "attnexp.models.names": "the model families' names, torch-free by design: the wildcard constraints of the train rules",
    "attnexp.models.device": "gpu_jobs and effective_threads: `resources: gpu=1` and the threads a job really gets",
    "attnexp.datasets.acquire": "DOWNLOADS: one download rule per official archive, and the files it extracts",
    "attnexp.datasets.generated.synthetic": "FAMILY_FILES: one synthesize rule per generated family, and its outputs",
    "attnexp.report.catalog": "the titles and file stems of the tables and figures: outputs and report entries",
    "attnexp.report.order": "the papers' order of datasets and report sections, import-light: the HTML report's entries",
}
HEAVY = ("torch", "pandas", "numpy", "matplotlib")  # never at parse time
IMPORT_LINE = re.compile(r"^\s*(from\s+[A-Za-z_][\w.]*\s+import\b|import\s+[A-Za-z_][\w.]*)")


def rule_file_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import statement of a Snakemake file, at any indentation (a `run:` block or a
    function too). Snakemake's syntax is not Python, so each statement is cut out (a parenthesized or continued one
    whole) and parsed alone. `from a import b` names the module a.b where that is one of ours, else a."""
    ours = {module_name(p) for p in PACKAGE.rglob("*.py")}
    lines = path.read_text().splitlines()
    found = []
    for number, line in enumerate(lines, start=1):
        if not IMPORT_LINE.match(line):
            continue
        statement, end = [line], number
        while "\n".join(statement).count("(") > "\n".join(statement).count(")") or statement[-1].endswith("\\"):
            statement.append(lines[end])
            end += 1
        (node,) = ast.parse(textwrap.dedent("\n".join(statement))).body
        if isinstance(node, ast.Import):
            found += [(number, alias.name) for alias in node.names]
        else:
            assert node.level == 0 and node.module, f"{path.name}:{number}: a relative import"
            found += [
                (number, f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in ours else node.module) for a in node.names
            ]
    return list(dict.fromkeys(found))  # `from a import b, c` is one import of a


def side_doors(paths: list[Path]) -> list[str]:
    """`file:line module` for each import of the library that is neither attnexp.pipeline nor allowed, and for any
    heavy package imported by a rule file directly."""
    doors = []
    for path in paths:
        for number, module in rule_file_imports(path):
            root = module.split(".")[0]
            ours = root == "attnexp" and not (module == "attnexp.pipeline" or module.startswith("attnexp.pipeline."))
            if (ours and module not in RULE_FILE_IMPORTS) or root in HEAVY:
                doors.append(f"{path.name}:{number} {module}")
    return doors


def test_rule_files_enter_the_library_through_the_pipeline_and_the_allow_list():
    assert all(path.is_file() for path in RULE_FILES) and len(RULE_FILES) > 2
    assert side_doors(RULE_FILES) == []
    for path in RULE_FILES:
        assert "importlib" not in path.read_text() and "__import__" not in path.read_text(), path.name
    # the list stays the truth: an entry no rule file imports any more goes (move it behind attnexp.pipeline, drop it)
    used = {module for path in RULE_FILES for _, module in rule_file_imports(path) if module.startswith("attnexp.")}
    assert {"attnexp.pipeline.plan", "attnexp.pipeline.settings"} <= used  # the parser sees the door itself
    assert sorted(set(RULE_FILE_IMPORTS) - used) == []


def test_a_domain_import_in_a_rule_file_is_a_side_door(tmp_path):
    scratch = tmp_path / "scratch.smk"
    scratch.write_text(
        "from attnexp import paths\n"
        "from attnexp.pipeline import settings as job\n"
        "from attnexp.models import train\n"
        "import attnexp.analyses.jw.instances\n"
        "from attnexp.report.tables import (\n    write_table,\n)\n"
        'rule x:\n    output:\n        "x"\n    run:\n        import pandas\n        from attnexp import api\n'
    )
    assert side_doors([scratch]) == [
        "scratch.smk:3 attnexp.models.train",
        "scratch.smk:4 attnexp.analyses.jw.instances",
        "scratch.smk:5 attnexp.report.tables",
        "scratch.smk:12 pandas",
        "scratch.smk:13 attnexp.api",
    ]


def test_the_rule_files_library_imports_load_no_torch_pandas_or_matplotlib():
    """Snakemake imports these on every start (a dry run, a cluster's submit host): parse-time, import-light."""
    import subprocess
    import sys

    used = {module for path in RULE_FILES for _, module in rule_file_imports(path) if module.startswith("attnexp")}
    modules = sorted(used | set(RULE_FILE_IMPORTS))
    code = f"import sys\nfor m in {modules!r}: __import__(m)\n"
    code += f"print(sorted(m for m in {(*HEAVY, 'snakemake')!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", modules
