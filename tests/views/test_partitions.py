"""Per-run results kept by data file (`views.partitions`): after a commit, the whole frame built
from the last one (the changed runs' rows replaced) is the frame built from every run."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from analysis.comparison.baseline import baseline_sources
from ingest.contract.col import Col
from ingest.contract.schema import POINTS_SCHEMA, RunCol
from ingest.normalize.row import normalize
from ingest.store import Store
from views.partitions import MainLatest, PartitionCache, summary
from views.query.state import CompareView
from views.source import DataSource

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


def _main_run(st: Store, run: str, day: int, concs: list[int], branch: str = "main") -> None:
    _write(st, run, "h100", concs)
    st.upsert_run(
        {RunCol.RUN_ID: run, RunCol.BRANCH: branch, RunCol.CREATED_AT: f"2026-11-0{day}T06:00:00Z"}
    )


def _sources(source: DataSource, candidate: str) -> list[tuple[int, str]]:
    """(conc, main run) of each point of the candidate's main baseline, as the compare page
    reads it (the data source's kept main rows, at the store's current version)."""
    data = source.compare_data(CompareView(base="main", candidate=candidate))
    stored, base = data._main
    return baseline_sources(stored, base).select(Col.CONC, "source_run").rows()


def _fresh(st: Store) -> pl.DataFrame:
    got = MainLatest(st, st.runs).frame()
    assert got is not None
    return got.sort(Col.CONC, Col.RUN_ID)


def test_the_kept_main_rows_follow_every_ingest(tmp_path: Path) -> None:
    st = Store(tmp_path)
    _main_run(st, "m1", 1, [4, 8, 16])
    _main_run(st, "m2", 2, [4, 8])
    _main_run(st, "pr", 3, [4, 8, 16, 32], branch="feature")
    source = DataSource(st)
    assert _sources(source, "pr") == [(4, "m2"), (8, "m2"), (16, "m1")]
    # A new main run: on the next request its points are the newest at conc 4 and 16 (the
    # frame adds its rows and drops m1's conc 4, now the third newest).
    _main_run(st, "m3", 4, [4, 16])
    assert _sources(source, "pr") == [(4, "m3"), (8, "m2"), (16, "m3")]
    kept = source.main_latest.frame()
    assert kept is not None and kept.sort(Col.CONC, Col.RUN_ID).equals(_fresh(st))
    assert kept.sort(Col.CONC, Col.RUN_ID).select(Col.CONC, Col.RUN_ID).rows() == [
        (4, "m2"), (4, "m3"), (8, "m1"), (8, "m2"), (16, "m1"), (16, "m3"),
    ]  # fmt: skip
    # A kept run measured again without conc 16, then deleted: the frame is read again.
    _main_run(st, "m3", 4, [4])
    assert _sources(source, "pr") == [(4, "m3"), (8, "m2"), (16, "m1")]
    st.delete_run("m3")
    assert _sources(source, "pr") == [(4, "m2"), (8, "m2"), (16, "m1")]
    # A run moved off main, and a main run of the PR's own (its own rows never count).
    st.upsert_run({RunCol.RUN_ID: "m2", RunCol.BRANCH: "fix"})
    assert _sources(source, "pr") == [(4, "m1"), (8, "m1"), (16, "m1")]
    st.upsert_run({RunCol.RUN_ID: "pr", RunCol.BRANCH: "main"})
    assert _sources(source, "pr") == [(4, "m1"), (8, "m1"), (16, "m1")]
    assert _sources(source, "m1") == [(4, "pr"), (8, "pr"), (16, "pr")]
    kept = source.main_latest.frame()
    assert kept is not None and kept.sort(Col.CONC, Col.RUN_ID).equals(_fresh(st))


def test_the_kept_main_rows_are_bounded_by_bytes(tmp_path: Path) -> None:
    st = Store(tmp_path)
    _main_run(st, "m1", 1, [4, 8, 16])
    _main_run(st, "m2", 2, [4, 8])
    _main_run(st, "pr", 3, [4, 8, 16, 32], branch="feature")
    kept = MainLatest(st, st.runs).frame()
    assert kept is not None and kept.height == 5
    # Under a bound below those 5 rows nothing is kept, now or after a commit, and a
    # comparison reads the main runs instead: the same baseline.
    small = DataSource(st)
    small.main_latest = MainLatest(st, small.runs, max_bytes=kept.estimated_size() - 1)
    assert small.main_latest.frame() is None
    assert _sources(small, "pr") == [(4, "m2"), (8, "m2"), (16, "m1")]
    _main_run(st, "m3", 4, [8])
    assert small.main_latest.frame() is None
    assert _sources(small, "pr") == [(4, "m2"), (8, "m3"), (16, "m1")]
    data = small.compare_data(CompareView(base="main", candidate="pr"))
    whole = DataSource(st).compare_data(CompareView(base="main", candidate="pr"))
    assert data.markdown == whole.markdown and data.notes == whole.notes
