"""The Parquet store: the only module that writes or reads Parquet.

Layout under the store root::

    points/run=<key>.parquet       one file per run, rewritten whole on each ingest into the run
    timeseries/run=<key>.parquet   server-metric samples of that run's points
    runs.parquet                   the runs catalog
    rejects.parquet                every file or row that was not taken, with its reason
    jobs/                          runner job records (owned by runner.jobs)
    .lock                          an exclusive lock held by writers

Every write goes to a temporary file in the same directory and is renamed over the target, so a
reader (or a process killed mid-write) only ever sees a whole old file or a whole new one. Readers
open a file by name more than once (polars and pyarrow read the footer when they plan a scan and
the data when they run it), so a rename in between can pair an old footer with new data; the
reads here retry, which then see one whole version (`Store.collect` for lazy queries). Writers
serialise on `.lock` (fcntl), so two ingests never lose or double rows. A run's file is the unit
of partition pruning: reading one run opens one file.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from ingest.schema import (
    POINTS_SCHEMA,
    REJECTS_SCHEMA,
    RUNS_SCHEMA,
    TIMESERIES_SCHEMA,
    Col,
    RejectCol,
    RunCol,
    SeriesCol,
)

# What a run id may contain (one rule: ingest refuses other ids, the dashboard's URLs carry these
# unescaped): a letter or digit, then up to 199 letters, digits and `. _ : @ + -`.
RUN_ID_MAX_CHARS = 200
RUN_ID_RULE = (
    f"a letter or digit, then letters, digits and . _ : @ + - (at most {RUN_ID_MAX_CHARS} "
    "characters; no spaces, slashes or brackets)"
)
_RUN_ID = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9._:@+-]{{0,{RUN_ID_MAX_CHARS - 1}}}$")
_RUN_ID_BAD = re.compile(r"[^A-Za-z0-9._:@+-]+")


class InvalidRunId(ValueError):
    """A run id that breaks `RUN_ID_RULE`; the message suggests one that keeps it."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.suggestion = suggest_run_id(run_id)
        shown = run_id if len(run_id) <= 80 else run_id[:77] + "..."
        super().__init__(
            f"run id {shown!r} is not allowed: a run id is {RUN_ID_RULE}. "
            f"Pass --run-id {self.suggestion} (or rename the directory)"
        )


def is_valid_run_id(run_id: object) -> bool:
    """Whether `run_id` keeps the run id rule (what ingest accepts)."""
    return isinstance(run_id, str) and _RUN_ID.match(run_id) is not None


def check_run_id(run_id: str) -> str:
    """`run_id` when it keeps the rule.

    Raises:
        InvalidRunId: naming the rule and a suggested id.
    """
    if not is_valid_run_id(run_id):
        raise InvalidRunId(run_id)
    return run_id


def suggest_run_id(run_id: str) -> str:
    """An id that keeps the rule, made from one that does not ('sweep 2026-01 (retry)' ->
    'sweep-2026-01-retry')."""
    out = _RUN_ID_BAD.sub("-", run_id).strip("-._:@+")[:RUN_ID_MAX_CHARS].rstrip("-._:@+")
    return out or "run"


# Never in a run id a URL names, old or new: the URL's list separator, markup and quotes.
_NEVER_IN_RUN_IDS = frozenset(",<>\"'`\\")


def is_readable_run_id(run_id: object) -> bool:
    """Whether a run id can be named in a URL. Ids that stores written before the rule may hold
    (the default was the directory's name: spaces, brackets, `#`, `&`, non-ASCII letters) are
    tolerated on read; control characters, commas (the URL's list separator), markup and quote
    characters, and surrounding blanks are not."""
    return (
        isinstance(run_id, str)
        and 0 < len(run_id) <= 4 * RUN_ID_MAX_CHARS
        and run_id.strip() == run_id
        and run_id.isprintable()
        and _NEVER_IN_RUN_IDS.isdisjoint(run_id)
    )


def run_key(run_id: str) -> str:
    """File-name-safe, reversible key of a run id."""
    if run_id.replace("-", "").replace("_", "").replace(".", "").isalnum():
        return run_id
    return "b64-" + base64.urlsafe_b64encode(run_id.encode()).decode().rstrip("=")


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


# schema id -> (the schema, an empty frame of it, its column names, its polars dtypes). Keyed by
# id: hashing a 124-field Arrow schema costs more than building the empty frame.
_EMPTY: dict[int, tuple[pa.Schema, pl.DataFrame, list[str], list[pl.DataType]]] = {}


def _empty_of(schema: pa.Schema) -> tuple[pa.Schema, pl.DataFrame, list[str], list[pl.DataType]]:
    got = _EMPTY.get(id(schema))
    if got is None or got[0] is not schema:
        made = pl.from_arrow(schema.empty_table())
        assert isinstance(made, pl.DataFrame)
        got = _EMPTY[id(schema)] = (schema, made, made.columns, made.dtypes)
    return got


def _empty(schema: pa.Schema) -> pl.DataFrame:
    return _empty_of(schema)[1].clone()


def _exact(df: pl.DataFrame, schema: pa.Schema) -> bool:
    """The frame already has exactly the schema's columns, in order, with its polars dtypes."""
    _, _, names, dtypes = _empty_of(schema)
    return df.columns == names and df.dtypes == dtypes


def _conform(df: pl.DataFrame, schema: pa.Schema) -> pa.Table:
    """Cast a frame to exactly the given Arrow schema (missing columns become null)."""
    if df.columns == schema.names:
        # The same per-column casts as below, done by Arrow over the whole table, one chunk per
        # column.
        table = df.to_arrow().cast(schema)
        if any(c.num_chunks != 1 for c in table.columns):
            table = table.combine_chunks()
        return table
    cols = []
    for f in schema:
        if f.name in df.columns:
            arr = df.get_column(f.name).to_arrow()
            if isinstance(arr, pa.ChunkedArray):
                arr = arr.combine_chunks()
            cols.append(arr.cast(f.type) if arr.type != f.type else arr)
        else:
            cols.append(pa.nulls(df.height, type=f.type))
    return pa.Table.from_arrays(cols, schema=schema)


class Store:
    """A paretolens store rooted at a directory."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

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

    def _run_file(self, base: Path, run_id: str) -> Path:
        return base / f"run={run_key(run_id)}.parquet"

    # ---- locking and atomic writes -------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store's exclusive writer lock."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                self._sweep_temp_files()
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _sweep_temp_files(self) -> None:
        # Only the lock holder writes temporary files, so any found now are a dead writer's.
        for base in (self.root, self.points_dir, self.series_dir):
            for tmp in base.glob(".tmp-*.parquet"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)

    def _write(self, table: pa.Table, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".parquet", dir=target.parent)
        os.close(fd)
        try:
            pq.write_table(table, tmp, compression="zstd")
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    @staticmethod
    def _read(path: Path, schema: pa.Schema) -> pl.DataFrame:
        def read() -> pl.DataFrame:
            if not path.exists():
                return _empty(schema)
            df = pl.from_arrow(pq.read_table(path, schema=schema))
            assert isinstance(df, pl.DataFrame)
            return df

        return _retrying(read)

    # ---- points --------------------------------------------------------------------------------
    def run_ids(self) -> list[str]:
        """Ids of the runs that have points or a catalog entry."""
        return sorted(self.runs().get_column(RunCol.RUN_ID).to_list())

    def _point_files(self, run_ids: Sequence[str] | None, base: Path) -> list[Path]:
        if run_ids is None:
            return sorted(base.glob("run=*.parquet")) if base.exists() else []
        return [p for p in (self._run_file(base, r) for r in run_ids) if p.exists()]

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
        """Remove a run's points, series, rejects and catalog entry."""
        for base in (self.points_dir, self.series_dir):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._run_file(base, run_id))
        runs = self.runs().filter(pl.col(RunCol.RUN_ID) != run_id)
        self._write(_conform(runs, RUNS_SCHEMA), self.runs_path)
        rej = self.rejects().filter(pl.col(RejectCol.RUN_ID) != run_id)
        self._write(_conform(rej, REJECTS_SCHEMA), self.rejects_path)


def _polars_overrides(schema: pa.Schema) -> dict[str, pl.DataType]:
    return dict(_empty(schema).schema)


def conform_frame(df: pl.DataFrame, schema: pa.Schema = POINTS_SCHEMA) -> pl.DataFrame:
    """Cast a frame to exactly `schema` (the points schema by default); absent columns are null."""
    if _exact(df, schema):
        return df.clone()
    out = pl.from_arrow(_conform(df, schema))
    assert isinstance(out, pl.DataFrame)
    return out
