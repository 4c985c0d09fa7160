"""The store: the only module that writes or reads it (a Delta Lake table, `ingest.lake.delta`).

A store is a local folder (the default) or an object-storage URI (`s3://`, `gs://`, `az://`).
Its data lives in one Delta table, `<store>/delta`, partitioned by logical table and run id
(see `ingest.lake.delta`); a local store also keeps runner job records in `jobs/` and downloads in
`cache/` (a remote store keeps them in a per-machine folder).

Writers group their changes with `Store.lock()`: what is written inside is staged in memory
and committed on exit as one Delta commit that replaces every partition touched (a run's points,
series, evals, rejects and catalog row, for every run of the batch). There is no lock: delta-rs
refuses a commit whose partitions another writer committed since this writer's snapshot, and the
change is then rebuilt on the new version (each write is recorded and replayed) and committed
again, so two writers on one machine or on two never lose or double rows. Killed at any moment,
the store holds the whole change or none of it: the commit is one log entry, and data files of a
commit that never happened are never read. A failure to write (full disk, read-only store)
raises `StoreWriteError` and leaves the store as it was.

Readers take a snapshot (one version) per read, so a read never mixes two versions, and
`Store.version()` is the committed version every cache keys on: a new commit, by this process
or any other, is seen on the next read. Inside `Store.pinned()` (each request of the web app)
every read of the thread is of one version, checked for new commits once. The table's log is
opened once per process and followed from there (`update_incremental`); a writer commits through
that table object, so an ingest reads the log once.

Stores written before Delta Lake (`runs.parquet`, `points/run=*.parquet`) are refused with a
message naming `paretolens store upgrade` (`ingest.lake.upgrade`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa

from ingest.contract.col import Col
from ingest.contract.derived import extra_metrics
from ingest.contract.schema import (
    REJECTS_SCHEMA,
    RejectCol,
    RunCol,
    SeriesCol,
)
from ingest.frames import _empty, conform_frame
from ingest.lake import delta, rows
from ingest.lake.delta import Snapshot
from ingest.lake.errors import LegacyStoreError, StoreWriteError

if TYPE_CHECKING:
    from deltalake import DeltaTable

__all__ = [
    "Store",
]

# Test hook: called with "staged" once a change is built and "committed" once its commit is in
# the table (the crash tests kill the process there).
STEP_HOOK: Callable[[str], None] | None = None
# How often a change is rebuilt on a newer version before giving up.
_ATTEMPTS = 50
_COLLAPSED_URI = re.compile(r"^(s3a?|gs|gcs|az|abfss?):/(?!/)", re.IGNORECASE)


def _step(name: str) -> None:
    if STEP_HOOK is not None:
        STEP_HOOK(name)


@dataclass
class _Txn:
    snap: Snapshot
    parts: dict[tuple[str, str], pa.Table] = field(default_factory=dict)
    ops: list[Callable[[], None]] = field(default_factory=list)
    action: str = "ingest"
    running: bool = False  # inside a recorded write: its own writes are not recorded again


class Store:
    """A paretolens store at a local directory or an object-storage URI."""

    def __init__(self, root: Path | str) -> None:
        text = _COLLAPSED_URI.sub(lambda m: f"{m.group(1)}://", str(root))
        self.remote = delta.is_remote(text)
        self.uri = text.rstrip("/") if self.remote else str(Path(text).absolute())
        # Local folder for runner jobs and download caches (the store itself when local).
        self.root = delta.local_workdir(self.uri) if self.remote else Path(root)
        self._local = threading.local()
        self._head_lock = threading.Lock()
        self._head: DeltaTable | None = None
        self._head_snap: Snapshot | None = None

    def __repr__(self) -> str:
        return f"Store({self.uri!r})"

    # ---- snapshots and versions ----------------------------------------------------------------
    def _legacy(self) -> bool:
        return not self.remote and (
            (self.root / "runs.parquet").exists() or (self.root / "points").is_dir()
        )

    def snapshot(self) -> Snapshot:
        """The latest committed version of the store and its files (for reading: it carries no
        table object to write through).

        Raises:
            LegacyStoreError: the store is in the layout written before Delta Lake.
        """
        pinned: Snapshot | None = getattr(self._local, "pin", None)
        if pinned is not None:
            return pinned
        with self._head_lock:
            return self._head_snapshot()[0]

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        """Read one version of the store in this thread while inside (a server's request: its
        page, its preloads and its callbacks read the same version, and the table's log is
        checked for new commits once, not at each of a page's 5-20 reads). A commit made inside
        ends it: what follows reads the new version. Nested calls keep the outer one's."""
        if getattr(self._local, "pin", None) is not None:
            yield
            return
        self._local.pin = self.snapshot()
        try:
            yield
        finally:
            self._local.pin = None

    def _head_snapshot(self) -> tuple[Snapshot, DeltaTable | None]:
        """(the latest snapshot, the head table at its version); the caller holds the head lock.
        The files are listed once per version, from the head itself (no second open)."""
        head = self._head
        if head is None:
            head = delta.open_table(self.uri)
        else:
            head.update_incremental()
        if head is None:
            if self._legacy():
                raise LegacyStoreError(self.root)
            return delta.snapshot_of(self.uri, None), None
        self._head = head
        cached = self._head_snap
        if cached is None or cached.version != head.version():
            cached = delta.snapshot_of(self.uri, head, with_table=False)
            self._head_snap = cached
        return cached, head

    def version(self) -> int:
        """The store's committed version (-1: nothing stored yet); every cache keys on it."""
        return self.snapshot().version

    def table_id(self) -> str:
        """The Delta table's id, given when it was created ("" before): a store made again at
        the same place counts its versions from 0 again under another id."""
        with self._head_lock:
            head = self._head_snapshot()[1]
        return "" if head is None else str(head.metadata().id)

    # ---- transactions --------------------------------------------------------------------------
    def _txn(self) -> _Txn | None:
        txn: _Txn | None = getattr(self._local, "txn", None)
        return txn

    # ---- changelogs (a run's changelog_metadata.json entries, beside the tables) -----------
    @property
    def changelog_dir(self) -> Path:
        return self.root / "changelogs"

    def write_changelog(self, run_id: str, entries: list[dict[str, object]]) -> None:
        """Keep a run's changelog entries (`ingest.changelog`), replacing what it had."""
        self.changelog_dir.mkdir(parents=True, exist_ok=True)
        path = self.changelog_dir / f"run={_file_key(run_id)}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"run_id": run_id, "entries": entries}, indent=1))
        tmp.replace(path)

    def changelog(self, run_id: str) -> list[dict[str, object]]:
        """A run's changelog entries ([] when it has none)."""
        path = self.changelog_dir / f"run={_file_key(run_id)}.json"
        if not path.is_file():
            return []
        doc = json.loads(path.read_text())
        return list(doc.get("entries", [])) if isinstance(doc, dict) else []

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Group the writes made inside into one commit (on exit; nested calls join the outer).

        There is no lock: a commit that conflicts with another writer's is rebuilt on the new
        version and committed again.

        Raises:
            StoreWriteError: the store cannot be written (read-only, full, ...); it holds what
                it held before.
        """
        if self._txn() is not None:
            yield
            return
        txn = _Txn(self._fresh_snapshot())
        self._local.txn = txn
        try:
            yield
            self._commit(txn)
        finally:
            self._local.txn = None

    def _fresh_snapshot(self) -> Snapshot:
        """The latest snapshot with a table object of its own (the base a writer's commit is
        checked on, and which the commit moves on): the head table itself, which this store
        stops reading from (the next read opens a new head), so a writer pays no second open
        of the table's log."""
        with self._head_lock:
            snap, head = self._head_snapshot()
            if head is None:
                return snap
            self._head = None
            return dataclasses.replace(snap, table=head)

    def _commit(self, txn: _Txn) -> None:
        for _ in range(_ATTEMPTS):
            if not txn.parts:
                return
            try:
                _step("staged")
                delta.commit(txn.snap, txn.parts, self._meta(txn))
            except delta.ConflictError:
                self._rebase(txn)
                continue
            except StoreWriteError:
                raise
            except OSError as exc:
                raise StoreWriteError(self.uri, exc) from exc
            self._local.pin = None  # this thread reads what it wrote
            _step("committed")
            return
        raise StoreWriteError(
            self.uri, OSError(errno.EBUSY, f"gave up after {_ATTEMPTS} conflicting commits")
        )

    def _rebase(self, txn: _Txn) -> None:
        """Rebuild the change on the newest version (replay every write made under the lock)."""
        txn.snap = self._fresh_snapshot()
        txn.parts.clear()
        txn.running = True
        try:
            for op in txn.ops:
                op()
        finally:
            txn.running = False

    def _meta(self, txn: _Txn) -> dict[str, str]:
        runs = sorted({r for _, r in txn.parts})
        sources: set[str] = set()
        for (table, _), staged in txn.parts.items():
            if table == "runs" and staged.num_rows:
                sources.update(str(s) for s in staged.column(RunCol.SOURCE).to_pylist() if s)
        return {
            delta.META_ACTION: txn.action,
            delta.META_RUNS: json.dumps(runs),
            delta.META_SOURCE: ",".join(sorted(sources)),
        }

    def _apply(self, op: Callable[[], None], action: str | None = None) -> None:
        txn = self._txn()
        if txn is None:
            with self.lock():
                self._apply(op, action)
            return
        if action is not None:
            txn.action = action
        if txn.running:
            op()
            return
        txn.ops.append(op)
        txn.running = True
        try:
            op()
        finally:
            txn.running = False

    def transaction(self, body: Callable[[], None]) -> None:
        """Run `body` (reads and writes of the store) as one change, committed at the end of the
        enclosing `lock()` (or now). When another writer commits to the same runs first, `body`
        runs again on the newer version, so it decides from what it reads there (which files are
        duplicates, the catalog's counts) and must reset whatever it reports each time."""
        self._apply(body)

    def _stage(self, table: str, run_id: str, rows: pa.Table) -> None:
        txn = self._txn()
        assert txn is not None
        txn.parts[(table, run_id)] = rows

    # ---- reads ---------------------------------------------------------------------------------
    def _lazy(self, table: str, run_ids: Sequence[str] | None) -> pl.LazyFrame:
        txn = self._txn()
        snap = txn.snap if txn is not None else self.snapshot()
        staged = txn.parts if txn is not None else {}
        if run_ids is None:
            mine = {r for t, r in staged if t == table}
            wanted = sorted(set(snap.runs_of(table)) | mine)
        else:
            wanted = list(dict.fromkeys(run_ids))
        frames: list[pl.LazyFrame] = []
        stored = snap.scan(table, [r for r in wanted if (table, r) not in staged])
        if stored is not None:
            frames.append(stored)
        for r in wanted:
            part = staged.get((table, r))
            if part is not None and part.num_rows:
                df = pl.from_arrow(part)
                assert isinstance(df, pl.DataFrame)
                frames.append(df.lazy())
        if not frames:
            return _empty(delta.SCHEMAS[table]).lazy()
        return pl.concat(frames, how="vertical_relaxed") if len(frames) > 1 else frames[0]

    def _frame(self, table: str, run_ids: Sequence[str] | None) -> pl.DataFrame:
        return self._lazy(table, run_ids).collect().rechunk()

    def run_ids(self) -> list[str]:
        """Ids of the runs that have a catalog entry."""
        if self._txn() is None:
            # A run has a catalog row exactly when its catalog partition has a file (a commit
            # writes one row per catalog partition, and an emptied partition keeps no file):
            # the table's log says which, without opening one file per run.
            return self.snapshot().runs_of("runs")
        return sorted(self.runs().get_column(RunCol.RUN_ID).to_list())

    def scan_points(self, run_ids: Sequence[str] | None = None) -> pl.LazyFrame:
        """Lazily scan points, opening only the files of the given runs (a derived metric
        declared beyond the stored columns is computed here)."""
        lf = self._lazy("points", run_ids)
        extra = extra_metrics()
        if not extra:
            return lf
        schema = lf.collect_schema()
        numeric = {c for c, t in schema.items() if t.is_numeric()}
        return lf.with_columns(m.expr(numeric, stated=False) for m in extra)

    def collect(
        self,
        query: Callable[[pl.LazyFrame], pl.LazyFrame],
        run_ids: Sequence[str] | None = None,
    ) -> pl.DataFrame:
        """Run a lazy query over `scan_points(run_ids)` (one version of the store).

        Args:
            query: builds the query from the scan (select, filter, group_by, ...).
            run_ids: the runs to scan (all when None).

        Returns:
            The collected result.
        """
        # One chunk per column, whatever the files' row groups: polars' kernels can round the
        # last bit of a float differently on another chunk layout.
        return query(self.scan_points(run_ids)).collect().rechunk()

    def points(self, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
        """Points of the given runs (all runs when None)."""
        return self.collect(lambda lf: lf, run_ids)

    def timeseries(
        self, run_ids: Sequence[str] | None = None, point_ids: Sequence[str] | None = None
    ) -> pl.DataFrame:
        """Server-metric samples of the given runs, optionally only some points."""
        lf = self._lazy("timeseries", run_ids)
        if point_ids is not None:
            lf = lf.filter(pl.col(SeriesCol.POINT_ID).is_in(list(point_ids)))
        return lf.collect().rechunk()

    def runs(self) -> pl.DataFrame:
        """The runs catalog (sorted by run id)."""
        return self._frame("runs", None).sort(RunCol.RUN_ID)

    def rejects(self, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
        """Rejected files and rows (of the given runs)."""
        return self._frame("rejects", run_ids)

    def evals(self, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
        """Eval rows of the given runs (every run when None)."""
        return self._frame("evals", run_ids)

    # ---- writes (grouped by lock()) ------------------------------------------------------------
    def replace_run_rows(
        self,
        run_id: str,
        new_points: pl.DataFrame,
        new_series: pl.DataFrame,
        replaced_sources: Sequence[str],
        renamed: Mapping[str, str] | None = None,
    ) -> None:
        """Replace the rows of `replaced_sources` in a run with `new_points` (and their series).

        Rows of other sources in the run are kept as they are, except the stored points named
        in `renamed` (stored point id -> the id of the new point that now holds it: a repeat or
        copy merged with a measurement of this ingest), which go, their series kept under the
        new id.
        """
        moved = dict(renamed or {})
        self._apply(
            lambda: self._replace_run_rows(run_id, new_points, new_series, replaced_sources, moved)
        )

    def _replace_run_rows(
        self,
        run_id: str,
        new_points: pl.DataFrame,
        new_series: pl.DataFrame,
        replaced_sources: Sequence[str],
        renamed: dict[str, str],
    ) -> None:
        old = self._frame("points", [run_id])
        table, dropped = rows.replaced_points(old, new_points, replaced_sources, renamed)
        self._stage("points", run_id, table)
        if new_series.height or dropped or renamed:
            # The series of the points written now replace any stored under their ids; those of
            # a merged stored point move to the point that holds it.
            written = (dropped - set(renamed)) | set(new_points.get_column(Col.POINT_ID).to_list())
            stored = self._frame("timeseries", [run_id])
            if renamed and stored.height:
                stored = stored.with_columns(
                    pl.col(SeriesCol.POINT_ID).replace(renamed).alias(SeriesCol.POINT_ID)
                )
                written -= set(renamed.values())
            series = rows.replaced_series(stored, new_series, written)
            self._stage("timeseries", run_id, series)

    def upsert_run(self, entry: dict[str, object]) -> None:
        """Insert or update one catalog entry (fields not given keep their stored value)."""
        rid = str(entry[RunCol.RUN_ID])
        self._apply(
            lambda: self._stage("runs", rid, rows.catalog_row(self._frame("runs", [rid]), entry))
        )

    def add_rejects(self, rejects: pl.DataFrame) -> None:
        """Record rejects; a (run, path, field, reason) already recorded is not repeated."""
        if rejects.height == 0:
            return
        frame = conform_frame(rejects, REJECTS_SCHEMA)
        self._apply(lambda: self._add_rejects(frame))

    def _add_rejects(self, rejects: pl.DataFrame) -> None:
        for (rid,), part in rejects.group_by(RejectCol.RUN_ID, maintain_order=True):
            table = rows.with_rejects(self._frame("rejects", [str(rid)]), part)
            if table is not None:
                self._stage("rejects", str(rid), table)

    def clear_rejects(self, run_id: str, paths: Sequence[str]) -> None:
        """Forget old rejects of files that have now been read successfully."""
        self._apply(lambda: self._clear_rejects(run_id, list(paths)))

    def _clear_rejects(self, run_id: str, paths: list[str]) -> None:
        table = rows.without_rejects_of(self._frame("rejects", [run_id]), paths)
        if table is not None:
            self._stage("rejects", run_id, table)

    def delete_run(self, run_id: str) -> None:
        """Remove a run's points, series, evals, rejects and catalog entry (one commit)."""
        self._apply(lambda: self._delete_run(run_id), action="delete")

    def _delete_run(self, run_id: str) -> None:
        for table in delta.SCHEMAS:
            self._stage(table, run_id, delta.empty_like(table))

    def replace_run_evals(self, run_id: str, frame: pl.DataFrame) -> None:
        """Replace the eval rows of `frame`'s files in a run (`ingest.eval_store`)."""
        from ingest.eval_store import replace_evals

        self._apply(
            lambda: replace_evals(
                run_id,
                frame,
                self._frame("evals", [run_id]),
                lambda t: self._stage("evals", run_id, t),
            )
        )

    def restore(self, version: int) -> int:
        """Make the store hold what it held at `version` (a new commit). Returns the new version."""
        return delta.restore(
            self.uri,
            version,
            {
                delta.META_ACTION: f"undo to {version}",
                delta.META_RUNS: "[]",
                delta.META_SOURCE: "",
            },
        )

    def vacuum(
        self, retention_hours: int = delta.RETENTION_HOURS, dry_run: bool = True
    ) -> list[str]:
        """The data files no version of the last `retention_hours` reads: listed, and deleted
        unless `dry_run` (the rows the store reads are the same before and after)."""
        self.snapshot()  # refuses a store in the old layout
        meta = {delta.META_ACTION: "vacuum", delta.META_RUNS: "[]", delta.META_SOURCE: ""}
        return delta.vacuum(self.uri, retention_hours, dry_run, meta)

    def log(self, limit: int | None = None) -> list[delta.Commit]:
        """The store's commits, newest first."""
        self.snapshot()  # refuses a store in the old layout
        return delta.history(self.uri, limit)


def _file_key(run_id: str) -> str:
    # A file name no two run ids share (the id itself is kept inside the file).
    import hashlib

    return hashlib.sha256(run_id.encode()).hexdigest()[:32]
