"""Cost growth: time and peak memory at 1e3 .. 1e6 points, each size in a fresh process."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any

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


def _child(task: str, sizes: list[int], runs: int, cfg: Config) -> list[dict[str, Any]]:
    workdir = cfg.workdir / f"growth-{task}-{sizes[0]}"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.child", task, ",".join(map(str, sizes)), str(runs),
         str(workdir)],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"benchmarks.child {task} {sizes} failed:\n{done.stderr[-2000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def run(cfg: Config) -> Section:
    """Measure cost growth of each operation over the configured sizes."""
    section = Section("Cost growth")
    runs = 3 if cfg.quick else cfg.runs
    if cfg.quick:
        section.notes.append(
            "Quick mode: 3 runs per size, all sizes of an operation in one process (smallest "
            "first), so a peak can hide behind memory the allocator kept from a smaller size."
        )
    for task, title, notes in OPERATIONS:
        rows = []
        if cfg.quick:
            results = _child(task, list(cfg.growth_sizes), runs, cfg)
        else:  # a fresh process per size: each peak is its own
            results = [_child(task, [n], runs, cfg)[0] for n in cfg.growth_sizes]
        for got in results:
            n = int(got["n"])
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
