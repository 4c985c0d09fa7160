"""The dependency arrows of STYLE.md: dashboard -> analysis -> ingest.schema, runner -> ingest,
paretolens.cli -> everything; nothing imports dashboard."""

from __future__ import annotations

import ast
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
