"""A run page's points written as an InferenceX app table dump, for the side-by-side anchor.

Issue 28 measures the run page against the InferenceX app drawing the same points. The app
runs without Postgres from a dump of its tables (`DUMP_DIR`; the format of
`../shared/docs/inferencex-dump.md`, read back by `ingest.sources.dump`): one JSON array of raw
rows per table. This writer makes such a dump from a paretolens points frame:

- one workflow run (a made-up `github_run_id`, conclusion `success`, one date);
- one config per paretolens arm (hardware, framework, spec method, parallelism from the arm's
  points), so every point is its own `(config_id, conc, isl, osl)` row, which the app keys on;
- one `benchmark_results` row per point, `metrics` holding the aggregate fields the point has
  (`tput_per_gpu`, `median_intvty`, latencies in seconds, ...);
- the `availability` tuples and one `run_stats` row per hardware, as the app's pages ask for;
  empty `eval_results`, `changelog_entries` and `server_logs`.

The app shows one model, sequence and precision at a time, while the run page shows every
point of its run: every row is written under one `AppView` (by default the Kimi-K2.5 int4
8k/1k view of the anchor, `/inference?g_model=Kimi-K2.5`), so the app draws all of them. A point
without `median_intvty` or `tput_per_gpu` (nothing to draw), or two points of one arm at one
concurrency (the app would keep one), is an error naming the points.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ingest.contract.col import Col

# The aggregate row's numeric fields the app reads into a chart point (latencies in seconds).
METRICS: tuple[str, ...] = (
    Col.TPUT_PER_GPU,
    Col.OUTPUT_TPUT_PER_GPU,
    Col.INPUT_TPUT_PER_GPU,
    *(
        f"{stat}_{metric}"
        for metric in ("ttft", "tpot", "intvty", "itl", "e2el")
        for stat in ("mean", "median", "p90", "p99", "p99.9")
    ),
)
DRAWN = (Col.MEDIAN_INTVTY, Col.TPUT_PER_GPU)  # the app's default chart: x, y
TABLES = (
    "configs.json",
    "workflow_runs.json",
    "benchmark_results.json",
    "availability.json",
    "run_stats.json",
    "eval_results.json",
    "changelog_entries.json",
    "server_logs.json",
)


class DumpError(ValueError):
    """The points cannot be drawn by the app as they are."""


@dataclass(frozen=True)
class AppView:
    """The one app view every row is written under, and the dump's workflow run."""

    model: str = "kimik2.5"
    display: str = "Kimi-K2.5"  # the app's name of `model`, as its page's query names it
    isl: int = 8192
    osl: int = 1024
    precision: str = "int4"
    date: str = "2026-03-30"
    github_run_id: int = 90000000001

    @property
    def page(self) -> str:
        """The app's page showing this view."""
        return f"/inference?g_model={self.display}"


@dataclass(frozen=True)
class DumpCounts:
    """Rows written per table."""

    configs: int
    benchmarks: int
    availability: int
    run_stats: int


def _check(points: pl.DataFrame) -> None:
    missing = points.filter(pl.any_horizontal(pl.col(c).is_null() for c in DRAWN))
    if missing.height:
        ids = ", ".join(missing.get_column(Col.POINT_ID).head(5).to_list())
        raise DumpError(
            f"{missing.height} point(s) without {' or '.join(DRAWN)} (the app's chart axes), "
            f"e.g. {ids}: drop them first, as the run page's chart does"
        )
    twice = points.group_by(Col.ARM_ID, Col.CONC).len().filter(pl.col("len") > 1)
    if twice.height:
        arm, conc, n = twice.row(0)
        raise DumpError(
            f"{twice.height} (arm, conc) pair(s) with more than one point, e.g. arm {arm} at "
            f"conc {conc} ({n} points): the app keeps one row per config and concurrency"
        )


def _int(row: dict[str, Any], col: str, fallback: str) -> int:
    value = row.get(col)
    return int(row[fallback] if value is None else value)


def _flag(row: dict[str, Any], col: str, fallback: str) -> bool:
    value = row.get(col)
    return bool(row[fallback] if value is None else value)


def _config(config_id: int, row: dict[str, Any], view: AppView) -> dict[str, Any]:
    return {
        "id": config_id,
        "hardware": row[Col.HW],
        "framework": row[Col.FRAMEWORK],
        "model": view.model,
        "precision": view.precision,
        "spec_method": row.get(Col.SPEC_DECODING) or "none",
        "disagg": bool(row.get(Col.DISAGG)),
        "is_multinode": bool(row.get(Col.IS_MULTINODE)),
        "prefill_tp": _int(row, Col.PREFILL_TP, Col.TP),
        "prefill_ep": _int(row, Col.PREFILL_EP, Col.EP),
        "prefill_dp_attention": _flag(row, Col.PREFILL_DP_ATTENTION, Col.DP_ATTENTION),
        "prefill_num_workers": int(row.get(Col.PREFILL_NUM_WORKERS) or 1),
        "decode_tp": _int(row, Col.DECODE_TP, Col.TP),
        "decode_ep": _int(row, Col.DECODE_EP, Col.EP),
        "decode_dp_attention": _flag(row, Col.DECODE_DP_ATTENTION, Col.DP_ATTENTION),
        "decode_num_workers": int(row.get(Col.DECODE_NUM_WORKERS) or 1),
        "num_prefill_gpu": _int(row, Col.PREFILL_GPUS, Col.TP),
        "num_decode_gpu": _int(row, Col.DECODE_GPUS, Col.TP),
    }


def dump_tables(points: pl.DataFrame, view: AppView | None = None) -> dict[str, list[Any]]:
    """The dump's tables (file name -> rows) for `points`, every row under `view`.

    Raises:
        DumpError: a point has nothing to draw, or one arm has two points at one concurrency.
    """
    view = view or AppView()
    _check(points)
    present = [m for m in METRICS if m in points.columns]
    arm_ids: dict[str, int] = {}
    configs: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for row in points.sort(Col.ARM_ID, Col.CONC).iter_rows(named=True):
        arm = str(row[Col.ARM_ID])
        if arm not in arm_ids:
            arm_ids[arm] = len(arm_ids) + 1
            configs.append(_config(arm_ids[arm], row, view))
        metrics = {m: float(row[m]) for m in present if row[m] is not None}
        results.append(
            {
                "id": len(results) + 1,
                "workflow_run_id": 1,
                "config_id": arm_ids[arm],
                "benchmark_type": "single_turn",
                "date": view.date,
                "isl": view.isl,
                "osl": view.osl,
                "conc": int(row[Col.CONC]),
                "image": row.get(Col.IMAGE),
                "metrics": metrics,
                "error": None,
                "server_log_id": None,
            }
        )
    tuples = sorted(
        {(c["hardware"], c["framework"], c["spec_method"], c["disagg"]) for c in configs}
    )
    availability = [
        {"model": view.model, "isl": view.isl, "osl": view.osl, "precision": view.precision,
         "hardware": hw, "framework": fw, "spec_method": spec, "disagg": disagg, "date": view.date}
        for hw, fw, spec, disagg in tuples
    ]  # fmt: skip
    per_hw: dict[str, int] = {}
    for result in results:
        hw = configs[result["config_id"] - 1]["hardware"]
        per_hw[hw] = per_hw.get(hw, 0) + 1
    run_stats = [
        {"id": i, "workflow_run_id": 1, "date": view.date, "hardware": hw, "n_success": n, "total": n}
        for i, (hw, n) in enumerate(sorted(per_hw.items()), start=1)
    ]  # fmt: skip
    stamp = f"{view.date}T00:00:00Z"
    run = {
        "id": 1,
        "github_run_id": view.github_run_id,
        "run_attempt": 1,
        "name": "paretolens side-by-side benchmark",
        "status": "completed",
        "conclusion": "success",
        "head_sha": "0" * 40,
        "head_branch": "main",
        "html_url": None,
        "created_at": stamp,
        "run_started_at": stamp,
        "date": view.date,
    }
    return {
        "configs.json": configs,
        "workflow_runs.json": [run],
        "benchmark_results.json": results,
        "availability.json": availability,
        "run_stats.json": run_stats,
        "eval_results.json": [],
        "changelog_entries.json": [],
        "server_logs.json": [],
    }


def write_dump(points: pl.DataFrame, directory: Path, view: AppView | None = None) -> DumpCounts:
    """Write `points` as an InferenceX app dump into `directory` (created); the rows per table.

    Raises:
        DumpError: as `dump_tables`.
    """
    tables = dump_tables(points, view)
    directory.mkdir(parents=True, exist_ok=True)
    for name in TABLES:
        (directory / name).write_text(json.dumps(tables[name]))
    return DumpCounts(
        configs=len(tables["configs.json"]),
        benchmarks=len(tables["benchmark_results.json"]),
        availability=len(tables["availability.json"]),
        run_stats=len(tables["run_stats.json"]),
    )
