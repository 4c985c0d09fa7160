"""The Parquet store: the only module that writes or reads Parquet.

Layout under the store root (the same as stores written before the journal; such a store opens
as it is, and its dead writers' temporary files are swept by the next writer)::

    points/run=<key>.parquet       one file per run, rewritten whole on each ingest into the run
    timeseries/run=<key>.parquet   server-metric samples of that run's points
    runs.parquet                   the runs catalog
    rejects.parquet                every file or row that was not taken, with its reason
    jobs/                          runner job records (owned by runner.jobs)
    .lock                          an exclusive lock held by writers
    .journal.json                  only between a change's commit and its last rename

Writers serialise on `.lock` (fcntl), so two ingests never lose or double rows. Everything a
writer changes while it holds the lock is one transaction (`ingest.journal`): each file is
staged beside its target, and on release one rename (the journal's) commits the whole change;
then the staged files are renamed into place and every directory fsynced. Killed at any moment,
the store holds all of the change or none of it: the next writer completes a committed change
before it does anything, and readers read through a pending journal. An error while writing
(a full disk, a read-only store) raises `StoreWriteError` and leaves the store as it was.

Readers open a file by name more than once (polars and pyarrow read the footer when they plan a
scan and the data when they run it), so a rename in between can pair an old footer with new
data; the reads here retry, which then see one whole version (`Store.collect` for lazy queries).
A run's file is the unit of partition pruning: reading one run opens one file.

A new kind of file is a path property, a reader through `_read` (or `_resolve`) and a writer
through `_write` (or `_delete`) called under `lock()`: it joins the transaction unchanged.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from ingest import journal
from ingest.contract.col import Col
from ingest.contract.schema import (
    POINTS_SCHEMA,
    REJECTS_SCHEMA,
    RUNS_SCHEMA,
    TIMESERIES_SCHEMA,
    RejectCol,
    RunCol,
    SeriesCol,
)
from ingest.frames import _conform, _empty, _polars_overrides, conform_frame
from ingest.journal import StoreWriteError
from ingest.run_ids import (
    run_key,
)

__all__ = [
    "Store",
]

_READ_ATTEMPTS = 5
# What reading a file that was renamed over mid-read raises (a footer and data of two versions),
# and what reading a run deleted since it was listed raises.
_TORN_READ = (pl.exceptions.ComputeError, OSError, pa.ArrowInvalid)
T = TypeVar("T")


def _retrying(read: Callable[[], T]) -> T:
    for attempt in range(_READ_ATTEMPTS):
        try:
            return read()
        except _TORN_READ:
            if attempt == _READ_ATTEMPTS - 1:
                raise
            time.sleep(0.005 * (attempt + 1))
    raise AssertionError("unreachable")


class Store:
    """A paretolens store rooted at a directory."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._local = threading.local()  # the calling thread's transaction, under lock()

    # ---- paths ---------------------------------------------------------------------------------
    @property
    def points_dir(self) -> Path:
        return self.root / "points"

    @property
    def series_dir(self) -> Path:
        return self.root / "timeseries"

    @property
    def runs_path(self) -> Path:
        return self.root / "runs.parquet"

    @property
    def rejects_path(self) -> Path:
        return self.root / "rejects.parquet"

    @property
    def changelog_dir(self) -> Path:
        return self.root / "changelogs"

    def write_changelog(self, run_id: str, entries: list[dict[str, object]]) -> None:
        """Keep a run's changelog entries (`ingest.changelog`), replacing what it had."""
        self.changelog_dir.mkdir(parents=True, exist_ok=True)
        path = self.changelog_dir / f"run={run_key(run_id)}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"run_id": run_id, "entries": entries}, indent=1))
        tmp.replace(path)

    def changelog(self, run_id: str) -> list[dict[str, object]]:
        """A run's changelog entries ([] when it has none)."""
        path = self.changelog_dir / f"run={run_key(run_id)}.json"
        if not path.is_file():
            return []
        doc = json.loads(path.read_text())
        return list(doc.get("entries", [])) if isinstance(doc, dict) else []

    def _run_file(self, base: Path, run_id: str) -> Path:
        return base / f"run={run_key(run_id)}.parquet"

    # ---- locking and transactions --------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store's exclusive writer lock; what is written meanwhile is one transaction.

        Raises:
            StoreWriteError: the store cannot be written (read-only, full, ...); it holds what
                it held before (or, if the failure came after the commit point, the whole change,
                which the next writer finishes applying).
        """
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fh = open(self.root / ".lock", "a+")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise StoreWriteError(self.root, exc) from exc
        with fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            txn = journal.Transaction(self.root)
            try:
                try:
                    journal.recover(self.root)
                    journal.sweep(self.root)
                except OSError as exc:
                    raise StoreWriteError(self.root, exc) from exc
                self._local.txn = txn
                try:
                    yield
                except OSError as exc:
                    txn.abort()
                    if isinstance(exc, StoreWriteError):
                        raise
                    raise StoreWriteError(self.root, exc) from exc
                except BaseException:
                    txn.abort()
                    raise
                finally:
                    self._local.txn = None
                txn.commit()
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _txn(self) -> journal.Transaction | None:
        txn: journal.Transaction | None = getattr(self._local, "txn", None)
        return txn

    def _pending(self) -> dict[str, str | None] | None:
        return None if self._txn() is not None else journal.pending(self.root)

    def _resolve(self, target: Path, pending: object = False) -> Path | None:
        """The file that holds `target`'s current content for this thread (None: absent): the
        writer's staged file, a pending journal's (`pending`: one `_pending()` for many files),
        or the target itself."""
        txn = self._txn()
        if txn is not None:
            return txn.resolve(target)
        got = self._pending() if pending is False else pending
        return target if not isinstance(got, dict) else journal.resolve(self.root, got, target)

    def _write(self, table: pa.Table, target: Path) -> None:
        """Write `target` whole: staged into the transaction under `lock()`; outside it, on its
        own (temporary file, fsync, rename, directory fsync)."""

        def write(tmp: Path) -> None:
            pq.write_table(table, tmp, compression="zstd")

        txn = self._txn()
        if txn is not None:
            txn.stage(target, write)
            return
        one = journal.Transaction(self.root)
        one.stage(target, write)
        one.commit()

    def _delete(self, target: Path) -> None:
        txn = self._txn()
        if txn is None:
            raise RuntimeError("a store file is deleted under Store.lock()")
        txn.delete(target)

    def _read(self, path: Path, schema: pa.Schema) -> pl.DataFrame:
        def read() -> pl.DataFrame:
            where = self._resolve(path)
            if where is None or not where.exists():
                return _empty(schema)
            df = pl.from_arrow(pq.read_table(where, schema=schema))
            assert isinstance(df, pl.DataFrame)
            return df

        return _retrying(read)

    # ---- points --------------------------------------------------------------------------------
    def run_ids(self) -> list[str]:
        """Ids of the runs that have points or a catalog entry."""
        return sorted(self.runs().get_column(RunCol.RUN_ID).to_list())

    def _point_files(self, run_ids: Sequence[str] | None, base: Path) -> list[Path]:
        if run_ids is None:
            targets = set(base.glob("run=*.parquet")) if base.exists() else set()
            txn, pending = self._txn(), self._pending()
            for t in (
                txn.staged if txn is not None else pending or {}
            ):  # files the change adds (its deletes resolve to None below)
                path = t if isinstance(t, Path) else self.root / t
                if path.parent == base and path.name.startswith("run="):
                    targets.add(path)
        else:
            targets, pending = {self._run_file(base, r) for r in run_ids}, self._pending()
        found = (self._resolve(t, pending) for t in sorted(targets))
        return [p for p in found if p is not None and p.exists()]

    def scan_points(self, run_ids: Sequence[str] | None = None) -> pl.LazyFrame:
        """Lazily scan points, opening only the files of the given runs."""
        files = self._point_files(run_ids, self.points_dir)
        if not files:
            return _empty(POINTS_SCHEMA).lazy()
        return pl.scan_parquet([str(f) for f in files])

    def collect(
        self,
        query: Callable[[pl.LazyFrame], pl.LazyFrame],
        run_ids: Sequence[str] | None = None,
    ) -> pl.DataFrame:
        """Run a lazy query over `scan_points(run_ids)`, safe against concurrent writers.

        Args:
            query: builds the query from the scan (select, filter, group_by, ...).
            run_ids: the runs to scan (all when None).

        Returns:
            The collected result.
        """
        return _retrying(lambda: query(self.scan_points(run_ids)).collect())

    def points(self, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
        """Points of the given runs (all runs when None)."""
        return self.collect(lambda lf: lf, run_ids)

    def timeseries(
        self, run_ids: Sequence[str] | None = None, point_ids: Sequence[str] | None = None
    ) -> pl.DataFrame:
        """Server-metric samples of the given runs, optionally only some points."""

        def read() -> pl.DataFrame:
            files = self._point_files(run_ids, self.series_dir)
            if not files:
                return _empty(TIMESERIES_SCHEMA)
            lf = pl.scan_parquet([str(f) for f in files])
            if point_ids is not None:
                lf = lf.filter(pl.col(SeriesCol.POINT_ID).is_in(list(point_ids)))
            return lf.collect()

        return _retrying(read)

    def runs(self) -> pl.DataFrame:
        """The runs catalog."""
        return self._read(self.runs_path, RUNS_SCHEMA)

    def rejects(self, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
        """Rejected files and rows (of the given runs)."""
        df = self._read(self.rejects_path, REJECTS_SCHEMA)
        if run_ids is not None:
            df = df.filter(pl.col(RejectCol.RUN_ID).is_in(list(run_ids)))
        return df

    # ---- writes (call under lock()) ------------------------------------------------------------
    def replace_run_rows(
        self,
        run_id: str,
        new_points: pl.DataFrame,
        new_series: pl.DataFrame,
        replaced_sources: Sequence[str],
    ) -> None:
        """Replace the rows of `replaced_sources` in a run with `new_points` (and their series).

        Rows of other sources in the run are kept as they are.
        """
        pfile = self._run_file(self.points_dir, run_id)
        old = self._read(pfile, POINTS_SCHEMA)
        gone = set(replaced_sources) if old.height else set()
        kept = old.filter(~pl.col(Col.SOURCE_PATH).is_in(list(gone))) if gone else old
        dropped_ids = (
            set(
                old.filter(pl.col(Col.SOURCE_PATH).is_in(list(gone)))
                .get_column(Col.POINT_ID)
                .to_list()
            )
            if gone
            else set()
        )
        # Both parts cast to exactly the points schema, then one table (one chunk per column).
        parts = [_conform(kept, POINTS_SCHEMA)] if kept.height else []
        parts.append(_conform(new_points, POINTS_SCHEMA))
        table = pa.concat_tables(parts).combine_chunks() if len(parts) > 1 else parts[0]
        sfile = self._run_file(self.series_dir, run_id)
        if new_series.height or (dropped_ids and sfile.exists()):
            old_s = self._read(sfile, TIMESERIES_SCHEMA)
            # The series of the points written now replace any stored under their ids: a writer
            # killed after the series rename and before the points rename left them there, and
            # the ingest that runs again writes them once more.
            written = dropped_ids | set(new_points.get_column(Col.POINT_ID).to_list())
            kept_s = old_s.filter(~pl.col(SeriesCol.POINT_ID).is_in(list(written)))
            self._write(
                _conform(
                    pl.concat([kept_s, conform_frame(new_series, TIMESERIES_SCHEMA)]),
                    TIMESERIES_SCHEMA,
                ),
                sfile,
            )
        self._write(table, pfile)

    def upsert_run(self, entry: dict[str, object]) -> None:
        """Insert or update one catalog entry (fields not given keep their stored value)."""
        runs = self.runs()
        rid = entry[RunCol.RUN_ID]
        old = runs.filter(pl.col(RunCol.RUN_ID) == rid) if runs.height else runs
        base: dict[str, object] = old.row(0, named=True) if old.height else {}
        merged = {**base, **{k: v for k, v in entry.items() if v is not None}}
        row = conform_frame(
            pl.DataFrame([merged], schema_overrides=_polars_overrides(RUNS_SCHEMA), strict=False),
            RUNS_SCHEMA,
        )
        others = runs.filter(pl.col(RunCol.RUN_ID) != rid) if runs.height else runs
        out = pl.concat([conform_frame(others, RUNS_SCHEMA), row])
        self._write(_conform(out.sort(RunCol.RUN_ID), RUNS_SCHEMA), self.runs_path)

    def add_rejects(self, rejects: pl.DataFrame) -> None:
        """Record rejects; a (run, path, field, reason) already recorded is not repeated."""
        if rejects.height == 0:
            return
        old = self.rejects()
        key = [
            RejectCol.RUN_ID,
            RejectCol.PATH,
            RejectCol.SHA256,
            RejectCol.FIELD,
            RejectCol.REASON,
        ]
        new = conform_frame(rejects, REJECTS_SCHEMA).join(
            old.select(key), on=key, how="anti", nulls_equal=True
        )
        if new.height:
            self._write(_conform(pl.concat([old, new]), REJECTS_SCHEMA), self.rejects_path)

    def clear_rejects(self, run_id: str, paths: Sequence[str]) -> None:
        """Forget old rejects of files that have now been read successfully."""
        old = self.rejects()
        if not old.height:
            return
        drop = (pl.col(RejectCol.RUN_ID) == run_id) & pl.col(RejectCol.PATH).is_in(list(paths))
        if old.filter(drop).height:
            self._write(_conform(old.filter(~drop), REJECTS_SCHEMA), self.rejects_path)

    def delete_run(self, run_id: str) -> None:
        """Remove a run's points, series, rejects and catalog entry (one transaction; takes the
        lock when the caller does not hold it)."""
        with contextlib.nullcontext() if self._txn() is not None else self.lock():
            for base in (self.points_dir, self.series_dir):
                self._delete(self._run_file(base, run_id))
            runs = self.runs().filter(pl.col(RunCol.RUN_ID) != run_id)
            self._write(_conform(runs, RUNS_SCHEMA), self.runs_path)
            rej = self.rejects().filter(pl.col(RejectCol.RUN_ID) != run_id)
            self._write(_conform(rej, REJECTS_SCHEMA), self.rejects_path)

    def replace_run_evals(self, run_id: str, frame: pl.DataFrame) -> None:
        """Replace the eval rows of `frame`'s files in a run (`ingest.eval_store`); under lock()."""
        from ingest.eval_store import replace_evals

        replace_evals(self, run_id, frame, self._read, self._write)
