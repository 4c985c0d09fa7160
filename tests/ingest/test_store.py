"""The Delta store: replacement by source, catalog, rejects, one commit per change, partition
pruning, concurrent writers."""

from __future__ import annotations

import multiprocessing as mp
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_reading_one_run_opens_only_its_files(tmp_path: Path) -> None:
    st = Store(tmp_path)
    with st.lock():
        for run, tput in (("r1", 800.0), ("r2", 1600.0)):
            st.replace_run_rows(run, _frame([_row(run, "a.json", 4, tput)]), pl.DataFrame(), [])
    assert st.version() == 0  # both runs in one commit
    # r2's data files gone from under the table: r1 still reads, r2 does not.
    r2 = [p for p in tmp_path.rglob("*.parquet") if "run_id=r2" in str(p)]
    assert len(r2) == 1
    r2[0].unlink()
    assert Store(tmp_path).points(["r1"]).get_column(Col.TPUT_PER_GPU).to_list() == [100.0]
    try:
        Store(tmp_path).points(["r2"])
    except Exception as exc:  # the reader opened r2's file, which is gone
        assert "run_id=r2" in str(exc) or "No such file" in str(exc), exc
    else:
        raise AssertionError("r2 was read without its file")


def test_every_change_is_one_commit_and_the_log_names_its_runs(tmp_path: Path) -> None:
    st = Store(tmp_path)
    with st.lock():
        st.replace_run_rows("r1", _frame([_row("r1", "a.json", 4, 800.0)]), pl.DataFrame(), [])
        st.upsert_run({RunCol.RUN_ID: "r1", RunCol.SOURCE: "local", RunCol.POINT_COUNT: 1})
        st.upsert_run({RunCol.RUN_ID: "r2", RunCol.SOURCE: "github", RunCol.POINT_COUNT: 0})
    st.delete_run("r2")
    log = st.log()
    assert [(c.version, c.action, c.runs, c.source) for c in log] == [
        (1, "delete", ("r2",), ""),
        (0, "ingest", ("r1", "r2"), "github,local"),
    ]
    assert log[1].rows == 3  # one point and two catalog rows
    assert st.restore(0) == 2 and st.run_ids() == ["r1", "r2"]


def test_a_change_that_loses_the_race_is_rebuilt_on_the_winners_version(tmp_path: Path) -> None:
    """Writer A builds its change on version 0; writer B commits to the same run meanwhile. A's
    commit is refused by delta-rs, rebuilt on B's version (its writes replayed) and committed:
    both writers' rows are there, once each, and the catalog counts them."""
    a, b = Store(tmp_path), Store(tmp_path)
    with a.lock():
        a.replace_run_rows("r", _frame([_row("r", "base.json", 1, 80.0)]), pl.DataFrame(), [])
    with a.lock():
        a.replace_run_rows("r", _frame([_row("r", "a.json", 2, 160.0)]), pl.DataFrame(), [])
        a.upsert_run({RunCol.RUN_ID: "r", RunCol.BRANCH: "from-a"})
        with b.lock():  # B starts after A's snapshot and commits first
            b.replace_run_rows("r", _frame([_row("r", "b.json", 4, 320.0)]), pl.DataFrame(), [])
            b.upsert_run({RunCol.RUN_ID: "r", RunCol.TITLE: "from-b"})
        assert b.version() == 1
    got = Store(tmp_path)
    assert got.version() == 2
    assert sorted(got.points(["r"]).get_column(Col.SOURCE_PATH).to_list()) == [
        "a.json",
        "b.json",
        "base.json",
    ]
    row = got.runs().row(0, named=True)
    assert (row[RunCol.BRANCH], row[RunCol.TITLE]) == ("from-a", "from-b")


def test_a_change_on_another_run_commits_without_a_rebuild(tmp_path: Path) -> None:
    a, b = Store(tmp_path), Store(tmp_path)
    with a.lock():
        a.upsert_run({RunCol.RUN_ID: "r0"})
    built: list[str] = []

    def body() -> None:
        built.append("a")
        a.upsert_run({RunCol.RUN_ID: "r1"})

    with a.lock():
        a.transaction(body)
        with b.lock():
            b.upsert_run({RunCol.RUN_ID: "r2"})
    # delta-rs rebases a commit whose partitions nobody else touched: the body ran once.
    assert built == ["a"] and Store(tmp_path).run_ids() == ["r0", "r1", "r2"]


def test_a_pinned_reader_sees_one_version_until_it_writes(tmp_path: Path) -> None:
    """Inside `pinned()` (a server's request) every read is of the version pinned, whatever
    another writer commits meanwhile; the next pin sees the new version; a commit this reader
    makes inside ends its pin."""
    reader, other = Store(tmp_path), Store(tmp_path)
    other.upsert_run({RunCol.RUN_ID: "r1"})
    with reader.pinned():
        assert reader.run_ids() == ["r1"]
        other.upsert_run({RunCol.RUN_ID: "r2"})
        with reader.pinned():  # nested: the outer pin holds
            assert reader.version() == 0 and reader.run_ids() == ["r1"]
        assert reader.runs().get_column(RunCol.RUN_ID).to_list() == ["r1"]
    with reader.pinned():
        assert reader.version() == 1 and reader.run_ids() == ["r1", "r2"]
        reader.upsert_run({RunCol.RUN_ID: "r3"})
        assert reader.version() == 2 and reader.run_ids() == ["r1", "r2", "r3"]


def test_a_store_that_wrote_reads_its_own_and_others_commits(tmp_path: Path) -> None:
    """A writer commits through the table object its reads were listed from: the same store
    object then reads the new version, and another writer's after it."""
    a, b = Store(tmp_path), Store(tmp_path)
    a.upsert_run({RunCol.RUN_ID: "r1"})
    assert a.version() == 0 and a.run_ids() == ["r1"]
    a.replace_run_rows("r1", _frame([_row("r1", "a.json", 4, 800.0)]), pl.DataFrame(), [])
    b.upsert_run({RunCol.RUN_ID: "r2"})
    assert a.version() == 2 and a.run_ids() == ["r1", "r2"]
    assert a.points(["r1"]).get_column(Col.TPUT_PER_GPU).to_list() == [100.0]  # 800 / 8 GPUs


# One write: (run, the sources it replaces, the conc its new rows get, whether it starts a new
# commit); a deleted run is a write with the source "DELETE".
_WRITE = st.tuples(
    st.sampled_from(["r1", "r2:x"]),
    st.lists(st.sampled_from(["a.json", "b.json", "c.json", "DELETE"]), max_size=2, unique=True),
    st.integers(1, 64),
    st.booleans(),
)


@settings(max_examples=10, deadline=None)
@given(st.lists(_WRITE, min_size=1, max_size=6))
def test_the_store_holds_what_a_dictionary_of_the_same_writes_holds(
    writes: list[tuple[str, list[str], int, bool]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        model: dict[tuple[str, str], int] = {}
        groups: list[list[tuple[str, list[str], int, bool]]] = []
        for w in writes:
            if w[3] or not groups:
                groups.append([])
            groups[-1].append(w)
        for group in groups:
            with store.lock():
                for run, sources, conc, _ in group:
                    if "DELETE" in sources:
                        store.delete_run(run)
                        model = {k: v for k, v in model.items() if k[0] != run}
                        continue
                    rows = [_row(run, s, conc, 100.0 * conc) for s in sources]
                    store.replace_run_rows(run, _frame(rows), pl.DataFrame(), sources)
                    model.update({(run, s): conc for s in sources})
        got = Store(tmp).points().select(Col.RUN_ID, Col.SOURCE_PATH, Col.CONC).rows()
        assert sorted(got) == sorted((r, s, c) for (r, s), c in model.items())
        # One commit per lock() group, however many writes and runs it holds.
        assert Store(tmp).version() == len(groups) - 1


def test_a_table_written_before_a_column_joined_the_contract_reads_it_as_null_and_takes_it(
    tmp_path: Path,
) -> None:
    """A store written by a version whose points had no `arm_label` column yet: its rows read
    with `arm_label` null, and the next write adds the column to the table."""
    from deltalake import write_deltalake

    from ingest.lake import delta

    old_rows = delta.to_lake("points", _frame([_row("r1", "a.json", 4, 800.0)]).to_arrow())
    gone = [i for i, n in enumerate(old_rows.schema.names) if n == "points__arm_label"]
    assert gone, "the contract has an arm_label column"
    write_deltalake(
        str(tmp_path / "delta"), old_rows.remove_column(gone[0]), partition_by=delta.PARTITIONS
    )
    st = Store(tmp_path)
    assert st.points(["r1"]).get_column("arm_label").to_list() == [None]
    new = _frame([_row("r2", "b.json", 8, 1600.0)]).with_columns(pl.lit("TP8").alias("arm_label"))
    with st.lock():
        st.replace_run_rows("r2", new, pl.DataFrame(), ["b.json"])
    got = Store(tmp_path).points().sort(Col.RUN_ID)
    assert got.get_column("arm_label").to_list() == [None, "TP8"]
    assert got.get_column(Col.SOURCE_PATH).to_list() == ["a.json", "b.json"]
