"""Per-run results kept by data file (`views.partitions`): after a commit, the whole frame built
from the last one (the changed runs' rows replaced) is the frame built from every run."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from ingest.contract.col import Col
from ingest.contract.schema import POINTS_SCHEMA, RunCol
from ingest.normalize.row import normalize
from ingest.store import Store
from views.partitions import PartitionCache, summary

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _points(run: str, hw: str, concs: list[int]) -> pl.DataFrame:
    rows = [
        normalize(
            {
                Col.CONC: c,
                Col.TP: 8,
                Col.TOTAL_TPUT: 100.0 * c,
                Col.MEDIAN_TPOT: 0.02,
                Col.MODEL: "m",
                Col.HW: hw,
            },
            run_id=run,
            source_path=f"{c}.json",
            source_sha256=str(c),
            artifact="a",
            ingested_at=NOW,
        )
        for c in concs
    ]
    schema = pl.from_arrow(POINTS_SCHEMA.empty_table()).schema  # type: ignore[union-attr]
    return pl.DataFrame(rows, schema=schema, strict=False)


def _write(st: Store, run: str, hw: str, concs: list[int]) -> None:
    with st.lock():
        st.replace_run_rows(
            run, _points(run, hw, concs), pl.DataFrame(), [f"{c}.json" for c in (1, 2, 4, 8, 16)]
        )
        st.upsert_run(
            {RunCol.RUN_ID: run, RunCol.TITLE: f"{run} on {hw}", RunCol.POINT_COUNT: len(concs)}
        )


def test_a_new_version_replaces_only_the_changed_runs_rows(tmp_path: Path) -> None:
    st = Store(tmp_path)
    for i in range(8):
        _write(st, f"r{i}", "h100", [4, 8])
    catalog, summaries = PartitionCache(st, "runs"), PartitionCache(st, "points", summary)
    assert catalog.frame().get_column(RunCol.RUN_ID).to_list() == [f"r{i}" for i in range(8)]
    assert summaries.frame().get_column(Col.HW).to_list() == ["h100"] * 8
    # One run measured again on other hardware, one deleted, one new between two others.
    _write(st, "r2", "b200", [16])
    st.delete_run("r5")
    _write(st, "r3a", "mi355x", [1, 2])
    got_catalog, got_summary = catalog.frame(), summaries.frame()
    ids = ["r0", "r1", "r2", "r3", "r3a", "r4", "r6", "r7"]
    assert got_catalog.get_column(RunCol.RUN_ID).to_list() == ids
    assert got_catalog.get_column(RunCol.TITLE).to_list()[2] == "r2 on b200"
    assert got_summary.select(Col.RUN_ID, Col.HW).rows() == [
        ("r0", "h100"), ("r1", "h100"), ("r2", "b200"), ("r3", "h100"), ("r3a", "mi355x"),
        ("r4", "h100"), ("r6", "h100"), ("r7", "h100"),
    ]  # fmt: skip
    # The same frames, row for row and type for type, as building them from every run.
    assert got_catalog.equals(PartitionCache(st, "runs").frame())
    assert got_summary.equals(PartitionCache(st, "points", summary).frame())
