"""Cost growth: time and peak memory at 1e3 .. 1e6 points, each size in a fresh process."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

from benchmarks.config import Config
from benchmarks.report import Growth, GrowthRow, Section

OPERATIONS = (
    (
        "analyze",
        "Frontier + verdicts (`analyze_points`), 100 points per arm",
        "Peak memory: the largest resident high-water mark of a call above the level before it "
        "(the input frame is not counted; warm-up ran on 1,000 points only).",
    ),
    (
        "store",
        "Open an N-point store and read one 500-point run (`Store(root).points([run])`)",
        "Flat time and memory are what partition pruning promises: the cost is that of one run.",
    ),
    (
        "ingest",
        "Ingest one 500-file batch into a store already holding N points (`ingest_paths`)",
        "The issue asks that ingest memory grow with the batch, not with the store: a time and "
        "memory exponent near 0 here is that property.",
    ),
)


def _child(task: str, n: int, runs: int, cfg: Config) -> dict[str, list[float]]:
    workdir = cfg.workdir / f"growth-{task}-{n}"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.child", task, str(n), str(runs), str(workdir)],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"benchmarks.child {task} {n} failed:\n{done.stderr[-2000:]}")
    result: dict[str, list[float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(cfg: Config) -> Section:
    """Measure cost growth of each operation over the configured sizes."""
    section = Section("Cost growth")
    for task, title, notes in OPERATIONS:
        rows = []
        for n in cfg.growth_sizes:
            runs = 3 if cfg.quick else cfg.runs
            got = _child(task, n, runs, cfg)
            rows.append(
                GrowthRow(
                    n=n,
                    seconds=statistics.median(got["seconds"]),
                    peak_bytes=int(max(got["peak_bytes"])),
                    runs=runs,
                )
            )
        section.growth.append(Growth(title, rows, notes))
    return section
