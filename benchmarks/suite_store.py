"""Store: open a 1e6-point store and filter it to one run, vs one monolithic Parquet file."""

from __future__ import annotations

import itertools

import polars as pl

from benchmarks.config import Config
from benchmarks.report import Anchor, Check, Figure, Section
from benchmarks.synth import dir_size, runs_spec, synth_points, write_store
from benchmarks.timing import interleaved
from ingest.contract.col import Col
from ingest.store import Store


def run(cfg: Config) -> Section:
    """Measure the store figure."""
    n = cfg.store_points
    points = synth_points(runs_spec(n, points_per_run=cfg.run_points, seed=3))
    root = cfg.workdir / "store" / "big"
    run_ids = write_store(points, root)
    mono = cfg.workdir / "store" / "monolithic.parquet"
    points.write_parquet(mono, compression="zstd")
    del points
    section = Section(f"Store ({n:,} points in {len(run_ids):,} runs of {cfg.run_points})")
    # A different run on every call, so no call is served by what the previous one loaded.
    cycle = itertools.cycle(run_ids[:: max(1, len(run_ids) // 50)])

    def ours() -> pl.DataFrame:
        return Store(root).points([next(cycle)])

    def catalog_then_run() -> pl.DataFrame:
        store = Store(root)
        rid = store.runs().get_column("run_id")[len(run_ids) // 2]
        return store.points([rid])

    def lazy_scan_all() -> pl.DataFrame:
        rid = next(cycle)
        return Store(root).scan_points().filter(pl.col(Col.RUN_ID) == rid).collect()

    def mono_eager() -> pl.DataFrame:
        rid = next(cycle)
        return pl.read_parquet(mono).filter(pl.col(Col.RUN_ID) == rid)

    def mono_lazy() -> pl.DataFrame:
        rid = next(cycle)
        return pl.scan_parquet(mono).filter(pl.col(Col.RUN_ID) == rid).collect()

    assert ours().height == cfg.run_points
    t = interleaved(
        {
            "ours": ours,
            "catalog": catalog_then_run,
            "lazy_all": lazy_scan_all,
            "mono_eager": mono_eager,
            "mono_lazy": mono_lazy,
        },
        cfg.runs,
    )
    o = t["ours"]
    section.figures.append(
        Figure(
            name=f"Open a {n:,}-point store and filter to one run (`Store(root).points([run])`)",
            samples=o,
            target="<= 100 ms (lazy scan, partition pruning)",
            checks=[Check(f"median {o.median * 1000:.1f} ms <= 100 ms", o.median <= 0.1)],
            anchors=[
                Anchor("one monolithic Parquet file: read it all, then filter", t["mono_eager"]),
                Anchor(
                    "one monolithic Parquet file: lazy scan with the filter pushed down",
                    t["mono_lazy"],
                ),
                Anchor("ours, catalog first: `Store.runs()` then `points([run])`", t["catalog"]),
                Anchor("ours, lazy scan of every run file + filter on run_id", t["lazy_all"]),
            ],
            notes=(
                f"Store on disk: {dir_size(root) / 2**20:,.0f} MiB in {len(run_ids):,} files "
                f"(zstd); the monolithic anchor file is {mono.stat().st_size / 2**20:,.0f} MiB. "
                "Warm page cache (each file was just written or read); a different run on every "
                "call."
            ),
            command=cfg.command("store"),
        )
    )
    return section
