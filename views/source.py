"""The dashboard's data layer: the store, its caches, and one `RunData` per view.

`DataSource` is shared by every page and export of one app: it reads the store (catalog,
rejects, evals, master configs, server-metric series), caches what it read by file version, and
builds the cached `RunData` of a run view (`views.run_data`) and `CompareData` of a compare
view (`views.compare_data`). The named tables built from them are in `views.tables`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import polars as pl

from analysis.acceptance import GoldenTable, load_golden_tables
from analysis.comparison.baseline import MAIN
from analysis.cost import Costs, HardwareFile, load_hardware, parse_hwcost, with_costs
from analysis.frontier.interpolate import load_interpolation
from analysis.sweep.sweep_config import SweepConfig
from ingest.contract.col import Col
from ingest.contract.schema import RunCol, SeriesCol
from ingest.store import Store
from views import master_configs
from views.accuracy import evals_version, run_evals
from views.baseline import Query, Read
from views.cache import LRU, file_version, store_version
from views.compare_data import CompareData
from views.partitions import MainLatest, PartitionCache, summary
from views.query.state import CompareView, RunView
from views.run_data import (
    CACHE_IGNORED,
    RunData,
    data_version,
)

__all__ = [
    "DataSource",
]


class DataSource:
    """The store plus caches, shared by every page and export of one app."""

    def __init__(self, store: Store, golden_dir: Path | None = None) -> None:
        self.store = store
        self.golden_dir = golden_dir
        self._cache = LRU(32)
        # Parts of RunData shared by views that differ in fields the part does not read.
        self.parts = LRU(128)
        # Read per run, again only for runs whose files changed (views.partitions).
        self.catalog_parts = PartitionCache(store, "runs")
        self.summaries = PartitionCache(store, "points", summary)
        # The main runs' rows a main baseline can choose, kept across versions (bounded by bytes).
        self.main_latest = MainLatest(store, self.runs)

    @cached_property
    def hardware(self) -> HardwareFile:
        """The per-hardware power and $/GPU-h figures (data/hardware.yaml) of the cost columns."""
        return load_hardware()

    def costs(self, points: pl.DataFrame, hwcost: str) -> Costs:
        """`points` with the cost and energy columns filled (`hwcost`: the view's overrides)."""
        return with_costs(points, self.hardware, parse_hwcost(hwcost))

    @cached_property
    def golden(self) -> tuple[GoldenTable, ...]:
        """The golden AL tables (none when no directory is configured)."""
        if self.golden_dir is None or not self.golden_dir.exists():
            return ()
        return load_golden_tables(self.golden_dir)

    def warm(self) -> None:
        """Run one small analysis so the first page view does not pay for library warm-up, load
        the comparisons' interpolation library (the first compare or history page would wait
        for it), and read the per-run catalog and configuration summaries and the main runs'
        rows a main baseline can choose (later versions read only the runs that changed)."""
        self.catalog()
        runs = self.store.run_ids()[:1]
        if runs:
            self.run_data(RunView(runs=tuple(runs))).main_plane  # noqa: B018
        load_interpolation()
        self.main_latest.frame()

    def compare_data(self, view: CompareView) -> CompareData:
        """The (cached) data of a compare view."""
        runs = [r for r in (view.base, view.candidate) if r]
        # `base=main` reads every main-branch run: keyed on the whole store then.
        read = None if view.base == MAIN else runs
        key = (
            "compare",
            view.model_copy(update={"logx": False, "logy": False}),
            store_version(self.store, read),
            evals_version(self.store, runs),
        )
        main_read = self.main_read(view.candidate) if read is None and view.candidate else None
        return self._cache.get(
            key,
            lambda: CompareData(
                self.store,
                view,
                catalog=self.runs,
                main_read=main_read,
                main_latest=self.main_latest_frame,
            ),
        )

    def cached(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """A value kept for the store's current version under `key` (bounded by the LRU)."""
        return self._cache.get((*key, self.store.version()), make)

    def main_read(self, run_id: str) -> Read:
        """Reads the points of some runs for the main-branch baseline of `run_id`, skipping the
        runs that cannot hold a baseline point: `latest_main_baseline` matches hardware,
        framework and precision exactly and a model key starting with the run's, so a run with
        no such configuration (the store's configuration summary says) is not read. Which runs
        those are is worked out at the first read of another run than `run_id`."""

        @cache
        def sharing() -> set[str]:
            return self._sharing(run_id)

        def read(query: Query, ids: list[str]) -> pl.DataFrame:
            others = any(r != run_id for r in ids)
            return self.store.collect(
                query, [r for r in ids if r == run_id or (others and r in sharing())]
            )

        return read

    def _sharing(self, run_id: str) -> set[str]:
        summ = self.summaries.frame()
        keys = [Col.HW, Col.FRAMEWORK, Col.PRECISION]
        model_key = pl.col(Col.MODEL_PREFIX).cast(pl.String).str.to_lowercase().str.strip_chars()
        mine = summ.filter(pl.col(Col.RUN_ID) == run_id)
        prefixes = mine.select(model_key).to_series().drop_nulls().unique().to_list()
        same = summ.join(mine.select(keys).unique(), on=keys, how="semi", nulls_equal=True)
        starts = pl.any_horizontal(
            [model_key.str.starts_with(p) for p in prefixes] or [pl.lit(False)]
        )
        return set(same.filter(starts).get_column(Col.RUN_ID).to_list())

    def main_latest_frame(self) -> pl.DataFrame | None:
        """The main runs' rows a main baseline can choose (`views.partitions.MainLatest`)."""
        return self.main_latest.frame()

    def arm_points(self, arms: Sequence[str]) -> pl.DataFrame:
        """The points of some arms in every run (only the runs that have them are read)."""

        def read() -> pl.DataFrame:
            runs = self.summaries.runs_with(Col.ARM_ID, arms)
            # The arm filter inside the scan: the runs' other arms' rows are never gathered.
            wanted = pl.col(Col.ARM_ID).is_in(list(arms))
            return self.store.collect(lambda lf: lf.filter(wanted), runs)

        return self._cache.get(("arm_points", tuple(arms), self.store.version()), read)

    def run_data(self, view: RunView) -> RunData:
        """The (cached) data of a run view."""
        data_view = view.model_copy(
            update={f: RunView.model_fields[f].default for f in CACHE_IGNORED}
        )
        version = data_version(self.store, view.runs)
        key = ("run", data_view, version)
        return self._cache.get(key, lambda: RunData(self, data_view, version))

    def page_version(self, runs: Sequence[str]) -> tuple[Any, ...]:
        """What a run page of `runs` reads beyond the app's settings: the store files of its
        data (which include the runs catalog, so any ingest changes it) and the master configs
        its prune controls list."""
        configs = sorted(self.master_configs().items())
        return (data_version(self.store, runs), tuple((n, file_version(p)) for n, p in configs))

    def evals(self, runs: Sequence[str]) -> pl.DataFrame:
        """The eval rows of some runs (read again when one of their eval files changes)."""
        key = ("evals", tuple(runs), evals_version(self.store, runs))
        return self._cache.get(key, lambda: run_evals(self.store, runs))

    def runs(self) -> pl.DataFrame:
        """The store's runs catalog as it is on disk (read again when the file changes)."""
        key = ("runs", self.store.version())
        return self._cache.get(key, lambda: self.catalog_parts.frame().sort(RunCol.RUN_ID))

    def rejects(self) -> pl.DataFrame:
        """Every rejected file and row of the store (read again when the file changes)."""
        key = ("rejects", self.store.version())
        return self._cache.get(key, self.store.rejects)

    def catalog(self) -> pl.DataFrame:
        """The runs catalog with the facets of each run's points (models, hardware, ...)."""
        key = ("catalog", store_version(self.store, None))
        return self._cache.get(key, self._catalog)

    def _catalog(self) -> pl.DataFrame:
        runs = self.runs()
        facet_cols = [Col.MODEL_PREFIX, Col.HW, Col.FRAMEWORK, Col.PRECISION, Col.SCENARIO]
        per_run = (
            (
                self.summaries.frame()
                .lazy()
                .select(Col.RUN_ID, Col.MODEL, *facet_cols)
                .with_columns(
                    # a run whose points name no model prefix is listed by its model's name
                    pl.coalesce(
                        pl.col(Col.MODEL_PREFIX).replace("", None),
                        pl.col(Col.MODEL).str.extract(r"models--[^/]+--([^/]+)"),
                        pl.col(Col.MODEL).str.strip_chars_end("/").str.split("/").list.last(),
                    ).alias(Col.MODEL_PREFIX)
                )
                .group_by(Col.RUN_ID)
                .agg([pl.col(c).drop_nulls().unique().sort().str.join(", ") for c in facet_cols])
            )
            .collect()
            .rechunk()
        )
        return runs.join(per_run, on=RunCol.RUN_ID, how="left").sort(
            RunCol.CREATED_AT, RunCol.RUN_ID, descending=True, nulls_last=True
        )

    def master_configs(self) -> dict[str, Path]:
        """The master configs the server knows: name -> file (`<store>/master-configs/`)."""
        return master_configs.master_configs(self.store)

    def master_config(self, name: str) -> SweepConfig:
        """A known master config, validated (`master_configs.load_master`; cached per file version)."""
        path = master_configs.master_path(self.store, name)
        return self._cache.get(
            ("master", name, file_version(path)), lambda: master_configs.load_master(path)
        )

    def series(self, run_id: str, point_id: str) -> pl.DataFrame:
        """Server-metric samples of one point (KV usage, cache hits, queue depths, ...)."""
        return self.store.timeseries([run_id], [point_id]).sort(SeriesCol.METRIC, SeriesCol.T)
