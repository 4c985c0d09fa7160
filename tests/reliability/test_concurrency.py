"""Concurrency: several processes ingest overlapping inputs into the same runs while another
process reads the store in a loop. Exactly the union lands (no row lost, none doubled), and the
reader never errors, never sees a doubled row and never sees a run's point count go down."""

from __future__ import annotations

import random
import shutil
import time
from pathlib import Path

import polars as pl
import pytest

from ingest.pipeline import ingest_paths
from ingest.store import Store
from tests.reliability import figures
from tests.reliability._support import FIXTURES, Worker, comparable, snapshot

SEED = 7
WRITERS = 4
INX = FIXTURES / "inferencex"
SOURCES = {
    "minimax": INX / "bench_serving_random" / "minimax-m2.5",
    "qwen": INX / "bench_serving_random" / "qwen3.5",
    "glm": INX / "bench_serving_random" / "glm-5",
    "dsr1": INX / "agentic_agg" / "dsr1_b200_multiturn_pareto_input",
    "together": INX / "together_runner_baselines",
}


def _split(root: Path, rng: random.Random) -> list[list[list[str]]]:
    """Give every file of every run to 1-3 writers; each writer ingests its share as two batches
    (so ingests interleave more), the runs shuffled differently for each writer."""
    shares: list[dict[str, list[Path]]] = [{} for _ in range(WRITERS)]
    for run, src in SOURCES.items():
        for f in sorted(src.glob("*")):
            for w in rng.sample(range(WRITERS), rng.randint(1, 3)):
                shares[w].setdefault(run, []).append(f)
    plans = []
    for w, share in enumerate(shares):
        dirs = []
        for run, files in share.items():
            d = root / f"w{w}" / run
            d.mkdir(parents=True)
            for f in files:
                shutil.copy(f, d / f.name)
            dirs.append(str(d))
        rng.shuffle(dirs)
        half = len(dirs) // 2
        plans.append([dirs[:half], dirs[half:]])
    return plans


@pytest.mark.timeout(240)
@pytest.mark.parametrize("round_", [0, 1])
def test_overlapping_ingests_land_exactly_the_union_while_a_reader_reads(
    tmp_path: Path, round_: int
) -> None:
    rng = random.Random(SEED + round_)
    plans = _split(tmp_path / "in", rng)
    union = tmp_path / "union"
    for run, src in SOURCES.items():
        shutil.copytree(src, union / run)
    ref = Store(tmp_path / "ref")
    ingest_paths([union / r for r in SOURCES], ref)

    store, stop = tmp_path / "store", tmp_path / "stop"
    reader = Worker(tmp_path / "reader.log")
    writers = [Worker(tmp_path / f"w{i}.log") for i in range(WRITERS)]
    for w in [reader, *writers]:
        w.wait_ready()
    reader.start({"mode": "read", "store": str(store), "stop": str(stop)})
    t0 = time.perf_counter()
    for w, plan in zip(writers, plans, strict=True):
        w.start({"mode": "ingest", "store": str(store), "paths": plan})
    results = [w.finish(timeout=180) for w in writers]
    seconds = time.perf_counter() - t0
    stop.touch()
    rc, seen = reader.finish(timeout=60)
    for code, res in results:
        assert code == 0 and res is not None and "crash" not in res, res
    assert rc == 0 and seen is not None and "crash" not in seen, seen

    got, want = snapshot(Store(store)), snapshot(ref)
    g, w = comparable(got.points), comparable(want.points)
    assert g.equals(w), ("not exactly the union", _difference(g, w), want.rejects.to_dicts())
    assert got.runs.drop("ingested_at").equals(want.runs.drop("ingested_at"))
    key = ["run_id", "path", "field", "reason"]
    assert got.rejects.select(key).sort(key).equals(want.rejects.select(key).sort(key))
    assert seen["n_errors"] == 0, seen["errors"]
    assert seen["duplicates"] == 0 and seen["regressions"] == 0, seen
    assert seen["reads"] >= 3, seen
    assert sum(r["accepted"] for _c, r in results if r) == want.points.height
    figures.add("concurrency", "rounds")
    figures.add("concurrency", "writer_processes", WRITERS)
    figures.add("concurrency", "ingest_batches", sum(len(p) for p in plans))
    figures.add(
        "concurrency",
        "files_offered",
        sum(len(list(Path(d).iterdir())) for p in plans for b in p for d in b),
    )
    figures.add("concurrency", "union_points", want.points.height)
    figures.add(
        "concurrency", "duplicate_offers_skipped", sum(r["duplicates"] for _c, r in results if r)
    )
    figures.add("concurrency", "reader_passes", seen["reads"])
    figures.add("concurrency", "reader_errors", seen["n_errors"])
    figures.add("concurrency", "writer_seconds", round(seconds, 1))


def _difference(got: pl.DataFrame, want: pl.DataFrame) -> dict[str, object]:
    """Which rows differ, by where they came from (for the failure message)."""
    cols = ["run_id", "source_path", "conc"]
    on = [
        c
        for c in got.columns
        if got.schema[c] != pl.List(pl.Utf8) and got.schema[c] != pl.List(pl.Float64)
    ]
    return {
        "heights": (got.height, want.height),
        "only_in_concurrent": got.join(want, on=on, how="anti", nulls_equal=True)
        .select(cols)
        .to_dicts(),
        "only_in_reference": want.join(got, on=on, how="anti", nulls_equal=True)
        .select(cols)
        .to_dicts(),
    }
