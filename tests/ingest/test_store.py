"""The Parquet store: atomic per-run files, replacement by source, catalog, rejects, locking."""

from __future__ import annotations

import multiprocessing as mp
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from ingest.contract.col import Col
from ingest.contract.schema import POINTS_SCHEMA, RejectCol, RunCol
from ingest.normalize.row import normalize
from ingest.run_ids import run_key
from ingest.store import Store

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _row(run: str, src: str, conc: int, tput: float, sha: str = "s") -> dict[str, object]:
    return normalize(
        {Col.CONC: conc, Col.TP: 8, Col.TOTAL_TPUT: tput, Col.MEDIAN_TPOT: 0.02, Col.MODEL: "m"},
        run_id=run,
        source_path=src,
        source_sha256=sha,
        artifact="a",
        ingested_at=NOW,
    )


def _frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    schema = pl.from_arrow(POINTS_SCHEMA.empty_table()).schema  # type: ignore[union-attr]
    return pl.DataFrame(rows, schema=schema, strict=False)


def test_run_key_is_file_safe_and_distinct() -> None:
    assert run_key("29003473063") == "29003473063"
    assert run_key("a/b") != run_key("a_b")
    assert "/" not in run_key("../../etc")


def test_replace_run_rows_replaces_only_the_named_sources(tmp_path: Path) -> None:
    st = Store(tmp_path)
    with st.lock():
        st.replace_run_rows(
            "r1",
            _frame([_row("r1", "a.json", 4, 800.0), _row("r1", "b.json", 8, 1600.0)]),
            pl.DataFrame(),
            ["a.json", "b.json"],
        )
        st.replace_run_rows(
            "r1", _frame([_row("r1", "a.json", 4, 880.0)]), pl.DataFrame(), ["a.json"]
        )
    df = st.points(["r1"]).sort(Col.CONC)
    # 880 / 8 GPUs = 110 tok/s/GPU replaced a.json's 100; b.json (1600 / 8 = 200) untouched.
    assert df.get_column(Col.TPUT_PER_GPU).to_list() == [110.0, 200.0]
    assert df.get_column(Col.SOURCE_PATH).to_list() == ["a.json", "b.json"]
    assert st.points(["other"]).height == 0
    assert list(tmp_path.glob("points/.tmp-*")) == []


def test_catalog_upsert_keeps_unspecified_fields(tmp_path: Path) -> None:
    st = Store(tmp_path)
    with st.lock():
        st.upsert_run({RunCol.RUN_ID: "r1", RunCol.BRANCH: "main", RunCol.POINT_COUNT: 2})
        st.upsert_run({RunCol.RUN_ID: "r1", RunCol.POINT_COUNT: 3})
        st.upsert_run({RunCol.RUN_ID: "r0", RunCol.POINT_COUNT: 1})
    runs = st.runs()
    assert runs.get_column(RunCol.RUN_ID).to_list() == ["r0", "r1"]
    assert runs.filter(pl.col(RunCol.RUN_ID) == "r1").row(0, named=True)[RunCol.BRANCH] == "main"
    assert runs.filter(pl.col(RunCol.RUN_ID) == "r1").row(0, named=True)[RunCol.POINT_COUNT] == 3


def test_rejects_are_not_repeated_and_clear_when_the_file_is_read(tmp_path: Path) -> None:
    st = Store(tmp_path)
    rej = pl.DataFrame(
        [
            {
                RejectCol.RUN_ID: "r",
                RejectCol.PATH: "x.json",
                RejectCol.SHA256: "h",
                RejectCol.READER: "json",
                RejectCol.FIELD: "",
                RejectCol.REASON: "invalid JSON",
                RejectCol.AT: NOW,
            }
        ]
    )
    with st.lock():
        st.add_rejects(rej)
        st.add_rejects(rej)
    assert st.rejects(["r"]).height == 1
    with st.lock():
        st.clear_rejects("r", ["x.json"])
    assert st.rejects().height == 0


def _writer(root: str, run: str, n: int) -> None:
    st = Store(root)
    for i in range(n):
        with st.lock():
            st.replace_run_rows(
                run,
                _frame([_row(run, f"{run}-{i}.json", i + 1, 100.0 + i)]),
                pl.DataFrame(),
                [f"{run}-{i}.json"],
            )


def test_two_processes_writing_one_run_lose_nothing(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), "shared", 6)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    # Both wrote the same six sources; replacement by source leaves exactly six rows.
    df = Store(tmp_path).points(["shared"])
    assert sorted(df.get_column(Col.SOURCE_PATH).to_list()) == sorted(
        f"shared-{i}.json" for i in range(6)
    )


def test_delete_run(tmp_path: Path) -> None:
    st = Store(tmp_path)
    with st.lock():
        st.replace_run_rows(
            "r1", _frame([_row("r1", "a.json", 4, 800.0)]), pl.DataFrame(), ["a.json"]
        )
        st.upsert_run({RunCol.RUN_ID: "r1"})
        st.delete_run("r1")
    assert st.points().height == 0 and st.runs().height == 0
