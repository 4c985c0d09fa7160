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


AGG = Path(__file__).resolve().parents[1] / "fixtures" / "inferencex" / "agg_fixed_seq"


def test_vacuum_deletes_the_files_a_replaced_run_left_and_the_rows_stay(tmp_path: Path) -> None:
    from deltalake import DeltaTable

    from ingest.store import Store

    root, first = tmp_path / "store", tmp_path / "first"
    first.mkdir()
    files = sorted(AGG.glob("*.json"))
    shutil.copy(files[0], first)
    assert _run("ingest", str(first), "--run-id", "r1", "--store", str(root))[0] == 0
    # The run ingested again with all three files: its partitions get new files.
    assert _run("ingest", str(AGG), "--run-id", "r1", "--store", str(root))[0] == 0
    table = root / "delta"

    def paths(dt: DeltaTable) -> set[str]:
        return {str(Path(u.removeprefix("file://")).relative_to(table)) for u in dt.file_uris()}

    old, live = paths(DeltaTable(str(table), version=0)), paths(DeltaTable(str(table)))
    replaced = sorted(old - live)
    assert replaced and all((table / f).exists() for f in replaced)
    before = Store(root).points().sort("conc")
    assert before.get_column("conc").to_list() == [4, 32, 64]

    # Within the retention window (the default week) nothing goes: undo still reaches version 0.
    code, out = _run("store", "vacuum", "--store", str(root))
    assert code == 0 and out.startswith("would delete 0 files"), out
    # A zero-hour window: the dry run lists exactly the replaced files and deletes nothing.
    code, out = _run("store", "vacuum", "--retention-hours", "0", "--store", str(root))
    assert code == 0 and out.split()[: len(replaced)] == replaced, out
    assert f"would delete {len(replaced)} files" in out
    assert all((table / f).exists() for f in replaced)
    code, out = _run("store", "vacuum", "--retention-hours", "0", "--yes", "--store", str(root))
    assert code == 0 and f"deleted {len(replaced)} files" in out, out
    assert not any((table / f).exists() for f in replaced)
    assert all((table / f).exists() for f in live)
    after = Store(root).points().sort("conc")
    assert after.equals(before)
    assert Store(root).runs().get_column("point_count").to_list() == [3]
