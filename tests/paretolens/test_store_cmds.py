"""`paretolens store`: an old-layout store is refused naming the upgrade, `store upgrade` converts
it in one commit, `store log` lists it, `store undo` refuses a version the store never had."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from paretolens.cli import app

LEGACY = Path(__file__).resolve().parents[1] / "reliability" / "legacy_store"


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return res.exit_code, " ".join(res.output.split())


def test_an_old_store_is_refused_then_upgraded_and_logged(tmp_path: Path) -> None:
    root = tmp_path / "old"
    shutil.copytree(LEGACY, root)
    code, out = _run("runs", "--store", str(root))
    assert code == 2 and f"paretolens store upgrade --store {root}" in out, out
    code, out = _run("store", "upgrade", "--store", str(root))
    assert code == 0, out
    # legacy_store: 2 runs, 4 points, 9 series samples, 1 reject
    assert out == "upgraded 2 runs (4 points, 1 rejects, 2 runs, 9 timeseries) to version 0"
    code, out = _run("runs", "--store", str(root), "--json")
    assert code == 0 and "legacy-agg" in out and "sweep 2026-01 (retry)" in out, out
    code, out = _run("store", "log", "--store", str(root))
    assert code == 0 and out.split()[0] == "0" and "upgrade" in out and "legacy" in out, out
    code, out = _run("store", "upgrade", "--store", str(root))
    assert code == 2 and "nothing to upgrade" in out, out
    code, out = _run("store", "undo", "7", "--store", str(root))
    assert code == 2 and "version 7 is not in the store" in out and "versions 0 to 0" in out, out
