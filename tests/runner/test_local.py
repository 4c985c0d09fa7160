"""The local backend's scheduling: parallel points, and a point whose executor is killed."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

from ingest.store import Store
from runner.jobs import JobState, JobTable, PointState
from runner.plan import parse_plan
from runner.worker import drive
from tests.runner.support import serve_commands, wait_for


def _plan(counts: Path, **extra: Any) -> dict[str, Any]:
    return {
        "name": "local",
        "defaults": {
            "model": "m/x",
            "isl": 1024,
            "osl": 1024,
            "framework": "vllm",
            "precision": "fp8",
        },
        "arms": [{"concs": [1, 2, 4]}],
        "env": {"FAKE_COUNTS_DIR": str(counts), "FAKE_SLEEP": "1.0"},
        "timeout_s": 30,
        "commands": serve_commands(),
        **extra,
    }


def test_max_parallel_runs_points_side_by_side(store: Store, counts: Path) -> None:
    plan = parse_plan(_plan(counts, commands=serve_commands(max_parallel=2)))
    job = JobTable(store).create(plan, "local")
    job = drive(store, job.id, poll_s=0.05)
    assert job.state == JobState.SUCCEEDED
    spans = sorted((p.started_at, p.finished_at) for p in job.points)
    assert all(s is not None and f is not None for s, f in spans)
    # the first two overlap; the third starts only when a slot frees
    (_, f1), (s2, f2), (s3, _) = spans
    assert s2 < f1 and s3 >= min(f1, f2)  # type: ignore[operator]
    ports = {
        json.loads((store.root / "jobs" / job.id / p.dir / "state.json").read_text())["port"]
        for p in job.points
    }
    assert len(ports) == 3


def test_an_executor_killed_mid_point_is_retried_once(store: Store, counts: Path) -> None:
    plan = parse_plan(_plan(counts, arms=[{"concs": [1]}]))
    table = JobTable(store)
    job = table.create(plan, "local")
    pdir = store.root / "jobs" / job.id / job.points[0].dir
    killed: list[int] = []

    def kill_first_executor() -> None:
        wait_for(lambda: (counts / job.points[0].point_id).exists(), 30, "the benchmark to start")
        state = json.loads((pdir / "state.json").read_text())
        os.kill(state["pid"], signal.SIGKILL)  # the executor only: its groups live on
        killed.append(state["pid"])

    t = threading.Thread(target=kill_first_executor)
    t.start()
    final = drive(store, job.id, poll_s=0.05)
    t.join()
    assert killed
    p = final.points[0]
    assert (final.state, p.state, p.attempt) == (JobState.SUCCEEDED, PointState.SUCCEEDED, 2)
    assert len((counts / p.point_id).read_text().split()) == 2  # ran twice, the first one cut short
