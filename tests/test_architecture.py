"""The dependency arrows (MAY_IMPORT, the README's layout table): analysis -> ingest.contract,
ingest.errors and ingest.bundled (where the bundled data files are); runner -> ingest; views ->
ingest, analysis, runner (headless: no dash, plotly or flask); dashboard -> views, ingest, analysis,
runner; paretolens (the composition root) -> everything, and nothing imports paretolens; of the
CLI's commands only `serve` imports `dashboard`. No import circle in any package, no flat folder
over about 15 modules (MAX_FLAT)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ingest", "analysis", "views", "dashboard", "runner", "paretolens")
# What each package may import of the others (a package, or one module of it); the README's
# layout section says the same (test_the_readme_states_the_rules).
MAY_IMPORT: dict[str, frozenset[str]] = {
    "ingest": frozenset(),
    # ingest.untrusted: the one escape of control characters and the one YAML loader, leaves
    # with no import of the project; ingest.bundled: where the bundled data files are.
    "analysis": frozenset(
        {"ingest.contract", "ingest.errors", "ingest.untrusted", "ingest.bundled"}
    ),
    "runner": frozenset({"ingest"}),
    "views": frozenset({"ingest", "analysis", "runner"}),
    "dashboard": frozenset({"views", "ingest", "analysis", "runner"}),
    "paretolens": frozenset({"ingest", "analysis", "views", "runner", "dashboard"}),
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def _modules(pkg: str) -> list[Path]:
    return sorted((ROOT / pkg).rglob("*.py"))


# The web libraries: analysis and views are headless (the CLI computes through views).
WEB = frozenset({"dash", "plotly", "dash_ag_grid", "dash_bootstrap_components", "flask"})


def _allowed(pkg: str, imported: str) -> bool:
    top = imported.split(".")[0]
    if top not in PACKAGES or top == pkg:
        return not (pkg in {"analysis", "views"} and top in WEB)
    return any(imported == r or imported.startswith(r + ".") for r in MAY_IMPORT[pkg])


@pytest.mark.parametrize("pkg", PACKAGES)
def test_dependency_direction(pkg: str) -> None:
    wrong = []
    for path in _modules(pkg):
        for imported in _imports(path):
            if not _allowed(pkg, imported):
                wrong.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert wrong == []


def test_the_rule_catches_a_wrong_way_arrow() -> None:
    assert not _allowed("ingest", "analysis.frontier.pareto")
    assert not _allowed("analysis", "dashboard.figures.frontier")
    assert not _allowed("analysis", "ingest.store")
    assert not _allowed("analysis", "plotly.graph_objects")
    assert not _allowed("dashboard", "paretolens.settings")
    assert not _allowed("runner", "views.query.state")
    assert not _allowed("views", "dashboard.app")
    assert not _allowed("views", "flask")
    assert not _allowed("views", "plotly.graph_objects")
    assert _allowed("dashboard", "analysis.frontier.pareto")
    assert _allowed("paretolens", "dashboard.app")
    assert _allowed("dashboard", "views.query.state")


# The composition root's modules that may import `dashboard`: the `serve` command and the WSGI
# entry point. Every other command computes through `views`.
SERVES = frozenset({"paretolens/commands/serve_cmds.py", "paretolens/wsgi.py"})


def test_only_serve_imports_the_dashboard() -> None:
    wrong = sorted(
        f"{path.relative_to(ROOT)} imports {imported}"
        for path in _modules("paretolens")
        for imported in _imports(path)
        if imported.split(".")[0] == "dashboard" and str(path.relative_to(ROOT)) not in SERVES
    )
    assert wrong == []


def test_the_readme_states_the_rules() -> None:
    # The README's "may import" table: each row's backticked project names (other than the
    # package's own), or every other package for "everything", or none for "nothing".
    readme = (ROOT / "README.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| (.+) \|$", readme, flags=re.MULTILINE))
    stated: dict[str, frozenset[str]] = {}
    for pkg in PACKAGES:
        cell = rows[pkg]
        if cell.startswith("everything"):
            stated[pkg] = frozenset(p for p in PACKAGES if p != pkg)
            continue
        names = re.findall(r"`([\w.]+)`", cell)
        stated[pkg] = frozenset(n for n in names if n.split(".")[0] in set(PACKAGES) - {pkg})
    assert stated == MAY_IMPORT


@pytest.mark.parametrize("pkg", [p for p in PACKAGES if p != "paretolens"])
def test_nothing_imports_the_composition_root(pkg: str) -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {imported}"
        for path in _modules(pkg)
        for imported in _imports(path)
        if imported.split(".")[0] == "paretolens"
    ]
    assert wrong == []


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _edges(path: Path, modules: set[str]) -> set[str]:
    """The project modules a module imports (TYPE_CHECKING and function-level imports too):
    `from pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg`."""
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.add(sub if sub in modules else base)
    return {m for m in out if m in modules and m != here}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                found.append(sorted(scc))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _graph() -> dict[str, set[str]]:
    paths = [p for pkg in PACKAGES for p in _modules(pkg)]
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _edges(p, modules) for p in paths}


def test_no_import_circle_in_any_package() -> None:
    assert _circles(_graph()) == []


def test_the_circle_check_finds_a_circle() -> None:
    graph = {"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "a.w": {"a.x"}}
    assert _circles(graph) == [["a.x", "a.y", "a.z"]]
    assert _circles({"a.x": {"a.y"}, "a.y": set()}) == []


# STYLE.md: one concept per module, split by concept, never by size alone; a folder of more than
# about 15 modules is asking to become packages. A folder of one module per format (the readers)
# is a registry and may grow.
MAX_FLAT = 15
REGISTRIES = frozenset({"ingest/readers"})


def _flat_folders() -> dict[str, int]:
    """Each package folder's count of modules (not counting `__init__.py`)."""
    out: dict[str, int] = {}
    for pkg in PACKAGES:
        for folder in [ROOT / pkg, *sorted(p.parent for p in (ROOT / pkg).rglob("*/__init__.py"))]:
            out[str(folder.relative_to(ROOT))] = sum(
                1 for p in folder.glob("*.py") if p.name != "__init__.py"
            )
    return out


def test_no_flat_folder_over_about_15_modules() -> None:
    folders = _flat_folders()
    assert {f: n for f, n in folders.items() if n > MAX_FLAT and f not in REGISTRIES} == {}
    # the folders the rule reads: every package and subpackage
    assert {"views", "views/query", "dashboard/figures", "analysis/frontier"} <= set(folders)


def test_packages_re_export_only() -> None:
    # `__init__.py` only re-exports (STYLE.md): no function or class is defined in one.
    defined = [
        f"{path.relative_to(ROOT)}: {node.name}"
        for pkg in PACKAGES
        for path in (ROOT / pkg).rglob("__init__.py")
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    assert defined == []


# What a CLI command or a server start must not pay for on import: scipy.interpolate (about a
# second; only comparisons need it) and pandas (pyarrow imports it whenever it is installed).
SLOW_IMPORTS = ("scipy.interpolate", "pandas")


@pytest.mark.parametrize("entry", ["paretolens.cli", "dashboard.app"])
def test_entry_points_import_without_the_slow_modules(entry: str) -> None:
    probe = (
        f"import sys, {entry}\nprint(','.join(m for m in {SLOW_IMPORTS!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"{entry} imports {done.stdout.strip()}"
