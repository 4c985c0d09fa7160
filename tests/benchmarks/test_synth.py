"""Smoke tests of the benchmark generator: shape, schema and the documented structure (fast)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from benchmarks.synth import (
    SynthSpec,
    aggregate_docs,
    anchor_rows,
    runs_spec,
    synth_points,
    write_store,
)
from ingest.contract.col import Col
from ingest.contract.schema import polars_schema
from ingest.store import Store


def test_points_follow_the_spec_and_the_schema() -> None:
    points = synth_points(SynthSpec(n_points=2_000, n_arms=20, arms_per_group=10, seed=1))
    assert points.height == 2_000
    assert points.schema == polars_schema()
    arms = points.group_by(Col.RUN_ID, Col.ARM_ID).len()
    assert arms.height == 20
    assert arms.get_column("len").unique().to_list() == [100]
    assert points.get_column(Col.POINT_ID).n_unique() == 2_000
    # Ladders are strictly increasing within an arm.
    steps = points.group_by(Col.RUN_ID, Col.ARM_ID).agg(pl.col(Col.CONC).diff().min())
    assert steps.get_column(Col.CONC).min() > 0


def test_same_seed_same_points() -> None:
    a = synth_points(SynthSpec(n_points=500, n_arms=5, seed=4))
    b = synth_points(SynthSpec(n_points=500, n_arms=5, seed=4))
    assert a.equals(b)


def test_runs_have_the_requested_size_and_real_ladders() -> None:
    points = synth_points(runs_spec(1_000, points_per_run=500, seed=2))
    sizes = points.group_by(Col.RUN_ID).len().get_column("len").to_list()
    assert sizes == [500, 500]
    ladder = sorted(points.get_column(Col.CONC).unique().to_list())
    assert ladder == [1, 2, 4, 8, 16, 32, 64, 128, 256]


def test_aggregate_documents_have_the_anchor_keys(tmp_path: Path) -> None:
    points = synth_points(runs_spec(18, points_per_run=18, seed=3))
    docs = list(aggregate_docs(points))
    assert len(docs) == 18
    keys = set(anchor_rows()[0])
    for name, doc in docs:
        assert name.startswith("agg_") and name.endswith(".json")
        assert set(doc) <= keys
        json.dumps(doc)


def test_written_store_reads_back(tmp_path: Path) -> None:
    points = synth_points(runs_spec(1_000, points_per_run=500, seed=5))
    run_ids = write_store(points, tmp_path)
    store = Store(tmp_path)
    assert store.run_ids() == sorted(run_ids)
    assert store.points([run_ids[0]]).height == 500


def test_a_history_spans_its_days_repeats_configurations_and_is_cached(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from benchmarks.synth import HistorySpec, copy_store, history_points, history_store

    spec = HistorySpec(n_runs=40, days=730, seed=3)
    points, catalog = history_points(spec)
    assert points.height == 40 * 334 and len(catalog) == 40
    assert points.schema == polars_schema()
    dates = sorted(
        datetime.strptime(c["created_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        for c in catalog.values()
    )
    assert (dates[-1] - dates[0]).days == 730
    # One sweep slice per run: one model, GPU and precision; 2 x 19 configurations.
    per_run = points.group_by(Col.RUN_ID).agg(
        pl.col(Col.MODEL_PREFIX).n_unique(), pl.col(Col.HW).n_unique(),
        pl.col(Col.PRECISION).n_unique(), pl.col(Col.ARM_ID).n_unique(),
    )  # fmt: skip
    assert set(per_run.get_column(Col.MODEL_PREFIX).to_list()) == {1}
    assert set(per_run.get_column(Col.HW).to_list()) == {1}
    assert set(per_run.get_column(Col.ARM_ID).to_list()) == {38}
    assert set(points.get_column(Col.SPEC_DECODING).to_list()) == {"none", "mtp"}
    # Configurations recur across runs (what /history follows).
    runs_per_arm = points.group_by(Col.ARM_ID).agg(pl.col(Col.RUN_ID).n_unique())
    assert runs_per_arm.get_column(Col.RUN_ID).max() > 1
    branches = [c["branch"] for c in catalog.values()]
    assert "main" in branches and any(b.startswith("pr-") for b in branches)

    root, ids = history_store(spec, tmp_path / "cache")
    assert root.name == f"history-{spec.key()}" and sorted(ids) == sorted(catalog)
    store = Store(root)
    assert store.run_ids() == sorted(catalog)
    assert store.runs().get_column("branch").to_list() == [
        catalog[r]["branch"] for r in sorted(catalog)
    ]
    # The cache is reused (same directory, no second write) and a copy leaves it untouched.
    version = store.version()
    assert history_store(spec, tmp_path / "cache") == (root, ids)
    copy = copy_store(root, tmp_path / "copy")
    Store(copy).delete_run(ids[0])
    assert Store(root).version() == version and Store(root).run_ids() == sorted(catalog)
