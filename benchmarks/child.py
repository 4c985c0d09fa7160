"""One cost-growth measurement in a fresh process (so its peak memory is its own).

Usage: python -m benchmarks.child TASK N[,N...] RUNS WORKDIR; prints one JSON object per size,
{"n": N, "seconds": [...], "peak_bytes": [...]}. The caller reports the median time and the
largest peak.

Tasks: `analyze` (frontier + verdicts of N points, 100 per arm), `store` (open an N-point store
and read one run), `ingest` (a 500-file batch into a store already holding N points).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.synth import (
    SynthSpec,
    runs_spec,
    synth_points,
    write_aggregate_dir,
    write_store,
)
from benchmarks.timing import peak_delta

Task = tuple[Callable[[], Any], Callable[[int], Any]]


def _analyze(n: int, workdir: Path) -> Task:
    from analysis.frontier.prune import analyze_points

    small = synth_points(SynthSpec(n_points=1000, n_arms=10, seed=1))
    points = synth_points(SynthSpec(n_points=n, n_arms=max(1, n // 100)))
    return lambda: analyze_points(small), lambda _i: analyze_points(points)


def _store(n: int, workdir: Path) -> Task:
    from ingest.store import Store

    write_store(synth_points(runs_spec(1000, seed=1)), workdir / "small")
    root = workdir / "store"
    run_ids = write_store(synth_points(runs_spec(n, seed=5)), root)
    return (
        lambda: Store(workdir / "small").points(),
        lambda i: Store(root).points([run_ids[i % len(run_ids)]]),
    )


def _ingest(n: int, workdir: Path) -> Task:
    from ingest.pipeline import ingest_paths
    from ingest.store import Store

    root = workdir / "store"
    write_store(synth_points(runs_spec(n, seed=5)), root)
    write_aggregate_dir(synth_points(runs_spec(500, seed=9)), workdir / "batch")
    write_aggregate_dir(synth_points(runs_spec(18, points_per_run=18, seed=2)), workdir / "warm")
    return (
        lambda: ingest_paths([workdir / "warm"], Store(workdir / "warm-store"), run_id="warm"),
        lambda i: ingest_paths([workdir / "batch"], Store(root), run_id=f"batch-{i}"),
    )


TASKS: dict[str, Callable[[int, Path], Task]] = {
    "analyze": _analyze,
    "store": _store,
    "ingest": _ingest,
}


def measure(task: str, n: int, runs: int, workdir: Path) -> dict[str, list[float]]:
    """Time and peak memory of `runs` calls of one task at one size."""
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        # Warm up on a small input only: imports and first-call costs are paid, while the
        # allocator has not yet grown to this size, so the first measured call shows the peak.
        warm, fn = TASKS[task](n, workdir)
        warm()
        seconds, peaks = [], []
        for i in range(runs):
            peak, secs, _ = peak_delta(lambda i=i: fn(i))
            seconds.append(secs)
            peaks.append(peak)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"seconds": seconds, "peak_bytes": peaks}


def main(argv: list[str]) -> None:
    """Sizes are comma-separated; several sizes run in this one process, smallest first."""
    task, sizes, runs, workdir = argv[0], argv[1], int(argv[2]), Path(argv[3])
    for n in sorted(int(s) for s in sizes.split(",")):
        got = measure(task, n, runs, workdir / str(n))
        print(json.dumps({"n": n, **got}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
