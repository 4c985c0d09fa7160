"""The dependency arrows of STYLE.md: dashboard -> analysis -> ingest.schema, runner -> ingest,
paretolens.cli -> everything; nothing imports dashboard."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ingest", "analysis", "dashboard", "runner", "paretolens")


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


def _allowed(pkg: str, imported: str) -> bool:
    top = imported.split(".")[0]
    if top not in PACKAGES or top == pkg:
        return not (
            pkg == "analysis"
            and top in {"dash", "plotly", "dash_ag_grid", "dash_bootstrap_components"}
        )
    rules = {
        "ingest": set(),
        "analysis": {"ingest.schema", "ingest.errors"},
        "runner": {"ingest", "analysis"},
        "dashboard": {
            "ingest",
            "analysis",
            "runner",
            "paretolens.settings",
            "paretolens.commands.ingest_cmds",
        },
        "paretolens": {"ingest", "analysis", "runner", "dashboard"},
    }[pkg]
    return any(
        imported == r
        or imported.startswith(r + ".")
        or (r in {"ingest", "analysis", "runner", "dashboard"} and top == r)
        for r in rules
    )


@pytest.mark.parametrize("pkg", PACKAGES)
def test_dependency_direction(pkg: str) -> None:
    wrong = []
    for path in _modules(pkg):
        for imported in _imports(path):
            if not _allowed(pkg, imported):
                wrong.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert wrong == []


def test_the_rule_catches_a_wrong_way_arrow() -> None:
    assert not _allowed("ingest", "analysis.pareto")
    assert not _allowed("analysis", "dashboard.figures")
    assert not _allowed("analysis", "ingest.store")
    assert not _allowed("analysis", "plotly.graph_objects")
    assert _allowed("dashboard", "analysis.pareto")


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
