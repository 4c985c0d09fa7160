"""Per-run results kept by the store's data files, so a new version reads only what changed.

A store's data files are never rewritten: an ingest into a run writes new files for that run's
partition and drops the old ones from the table (`ingest.lake.delta`). A value derived from one
run's rows is therefore valid for as long as that run's partition has the same files, whatever
else was committed since. `PartitionCache` keeps such a value per run, keyed by the run's file
names: on a new version it reads only the runs whose files changed (one scan over all of them),
instead of every run of the store. The runs catalog and the configuration summary of every
run's points (what the runs index, the history page and the main baseline choose runs by) are
read this way; with 3,000 runs, an ingest of one run costs the next request one run's files.

`MainLatest` keeps the main-branch runs' rows a main baseline can choose
(`analysis.comparison.baseline.latest_main_rows`: per configuration and load, the newest point of
the two newest runs), a frame of configurations x loads instead of every main-branch point, so a
`base=main` comparison reads its candidate's run and the chosen points only. A new version adds
the rows of the main runs it changed; a version that drops or rewrites a run the frame holds, or
changes the date a kept run is ordered by, reads every main run again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

import polars as pl

from analysis.comparison.baseline import MAIN, MATCH_COLUMNS, latest_main_rows
from ingest.contract.col import Col
from ingest.contract.derived import no_rows
from ingest.contract.schema import RunCol
from ingest.lake.delta import SCHEMAS
from ingest.store import Store

Derive = Callable[[pl.LazyFrame], pl.LazyFrame]

# The configuration summary of a run's points: one row per distinct combination.
SUMMARY_COLUMNS: tuple[str, ...] = (
    Col.RUN_ID,
    Col.ARM_ID,
    Col.MODEL,
    Col.MODEL_PREFIX,
    Col.HW,
    Col.FRAMEWORK,
    Col.PRECISION,
    Col.SCENARIO,
)


def summary(lf: pl.LazyFrame) -> pl.LazyFrame:
    """The distinct configurations of some runs' points (`SUMMARY_COLUMNS`)."""
    return lf.select(SUMMARY_COLUMNS).unique(maintain_order=True)


class PartitionCache:
    """`derive` of each run's rows of one logical table, kept per run by the run's data files.

    Args:
        store: the store.
        table: the logical table (`points`, `runs`, ...).
        derive: the per-run query; its result must keep `run_id` (the result is split by it).
    """

    def __init__(self, store: Store, table: str, derive: Derive | None = None) -> None:
        self.store = store
        self.table = table
        self.derive = derive or (lambda lf: lf)
        self._lock = threading.Lock()
        self._parts: dict[str, tuple[tuple[str, ...], pl.DataFrame]] = {}
        self._whole: tuple[int, pl.DataFrame] | None = None

    def frame(self) -> pl.DataFrame:
        """The derived rows of every run of the store's current version."""
        snap = self.store.snapshot()
        with self._lock:
            if self._whole is not None and self._whole[0] == snap.version:
                return self._whole[1]
            runs = snap.runs_of(self.table)
            files = {r: snap.files[(self.table, r)] for r in runs}
            stale = [r for r in runs if r not in self._parts or self._parts[r][0] != files[r]]
            if stale:
                lf = snap.scan(self.table, stale)
                assert lf is not None  # every stale run has files
                got = self.derive(lf).collect()
                by_run = got.partition_by(Col.RUN_ID, as_dict=True, maintain_order=True)
                empty = got.clear()
                for r in stale:
                    self._parts[r] = (files[r], by_run.get((r,), empty))
            gone = set(self._parts) - set(runs)
            for r in gone:
                del self._parts[r]
            whole: pl.DataFrame
            if self._whole is not None and runs and len(stale) + len(gone) < len(runs) // 2:
                # The last whole with the changed runs' rows replaced: its rows are in run id
                # order (`runs_of` sorts), so a stable sort by run id puts the new rows where a
                # concatenation of every run's rows would (concatenating 3,000 small frames
                # costs 0.1-0.2 s).
                changed = [*stale, *gone]
                kept = self._whole[1].filter(~pl.col(Col.RUN_ID).is_in(changed))
                fresh = [self._parts[r][1] for r in stale]
                whole = (
                    pl.concat([kept, *fresh], how="vertical_relaxed")
                    .sort(Col.RUN_ID, maintain_order=True)
                    .rechunk()
                )
            elif runs:
                parts = [self._parts[r][1] for r in runs]
                whole = pl.concat(parts, how="vertical_relaxed").rechunk()
            else:
                nothing = pl.from_arrow(no_rows(SCHEMAS[self.table]))
                assert isinstance(nothing, pl.DataFrame)
                whole = self.derive(nothing.lazy()).collect()
            self._whole = (snap.version, whole)
            return whole

    def runs_with(self, column: str, values: Sequence[str]) -> list[str]:
        """The runs with a row whose `column` is one of `values`."""
        got = self.frame().filter(pl.col(column).is_in(list(values)))
        return got.get_column(Col.RUN_ID).unique(maintain_order=True).to_list()


# The main-branch runs' points are read this many runs at a time when the frame is built whole
# (their matching columns are about 200 bytes a point: 150 MiB for 750,000 points at once).
BUILD_BATCH = 256
MAIN_LATEST_BYTES = 64 * 2**20


class MainLatest:
    """The main-branch rows a main baseline can choose, kept per store version and brought up
    to date from the last version by the main runs that changed (see the module's docstring).

    Args:
        store: the store.
        catalog: the runs catalog of the store's current version (branch and date per run).
        max_bytes: the most the frame may hold; past it nothing is kept (`frame` answers None
            from then on, and the caller reads the main runs' rows for each comparison).
    """

    def __init__(
        self,
        store: Store,
        catalog: Callable[[], pl.DataFrame],
        max_bytes: int = MAIN_LATEST_BYTES,
    ) -> None:
        self.store = store
        self.catalog = catalog
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._version: int | None = None
        self._frame: pl.DataFrame | None = None
        # per main run: (its created_at, its points files) when the frame was made
        self._runs: dict[str, tuple[object, tuple[str, ...]]] = {}
        self._over = False

    def frame(self) -> pl.DataFrame | None:
        """The rows (`MATCH_COLUMNS`) of the current version; None past the byte bound."""
        snap = self.store.snapshot()
        with self._lock:
            if self._over:
                return None
            if self._version == snap.version:
                return self._frame
            catalog = self.catalog()
            runs = self._main_runs(catalog, snap.files)
            old = self._frame
            changed = [r for r, k in runs.items() if self._runs.get(r) != k]
            gone = [r for r in self._runs if r not in runs]
            held = set() if old is None else set(old.get_column(Col.RUN_ID).unique().to_list())
            if old is None or held.intersection(changed) or held.intersection(gone):
                frame = self._build(list(runs), catalog)
            elif changed:
                fresh = self._read(changed)
                frame = latest_main_rows(pl.concat([old, fresh]), catalog)
            else:
                frame = old
            if frame.estimated_size() > self.max_bytes:
                self._over, self._frame, self._runs = True, None, {}
                return None
            self._version, self._frame, self._runs = snap.version, frame, runs
            return frame

    @staticmethod
    def _main_runs(
        catalog: pl.DataFrame, files: Mapping[tuple[str, str], tuple[str, ...]]
    ) -> dict[str, tuple[object, tuple[str, ...]]]:
        mains = catalog.filter(pl.col(RunCol.BRANCH) == MAIN)
        return {
            str(r): (when, files.get(("points", str(r)), ()))
            for r, when in zip(
                mains.get_column(RunCol.RUN_ID).to_list(),
                mains.get_column(RunCol.CREATED_AT).to_list(),
                strict=True,
            )
        }

    def _read(self, runs: Sequence[str]) -> pl.DataFrame:
        return self.store.collect(lambda lf: lf.select(MATCH_COLUMNS), runs)

    def _build(self, runs: list[str], catalog: pl.DataFrame) -> pl.DataFrame:
        frame = latest_main_rows(self._read([]), catalog)
        for i in range(0, len(runs), BUILD_BATCH):
            part = self._read(runs[i : i + BUILD_BATCH])
            frame = latest_main_rows(pl.concat([frame, part]), catalog)
        return frame


__all__ = ["SUMMARY_COLUMNS", "MainLatest", "PartitionCache", "summary"]
