"""End to end: fast sweep -> `paretolens prune` -> plan -> local backend -> ingested full sweep.

The fast sweep is real data (MiniMax-M2.5 TEP8/DEP8, ISL 1024). The "full sweep" runs the pruned
points with a fake server and a fake benchmark that are real processes writing vLLM
benchmark_serving JSON. One point fails, one times out, and the worker is killed mid-plan and
resumed; every point must still run exactly once.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import polars as pl
import pytest

from ingest.contract.col import Col
from ingest.contract.schema import RunCol
from ingest.store import Store
from runner import service
from runner.jobs import JobState, PointState
from runner.service import Caller
from tests.runner.support import FakeSettings, alive, full_sweep_plan, prune_output, wait_for


def test_prune_to_full_sweep_on_the_local_backend(
    tmp_path: Path, store: Store, counts: Path
) -> None:
    doc = prune_output(tmp_path)
    kept = {(a["arm_label"], tuple(a["conc_list"])) for a in doc["arms"]}
    assert kept == {
        ("TP8 EP8 | no spec | kv none", (4, 8, 48, 64)),
        ("TP8 EP8 DPA | no spec | kv none", (16, 48)),
    }
    plan = full_sweep_plan(doc, counts)
    points = {(p.arm.dp_attn, p.conc): p for p in plan.points()}
    assert sorted(points) == [
        (False, 4),
        (False, 8),
        (False, 48),
        (False, 64),
        (True, 16),
        (True, 48),
    ]
    assert full_sweep_plan(doc, counts).points() == plan.points()  # stable ids

    job_id = service.launch(plan, "local", store, FakeSettings(), caller=Caller.CLI, poll_s=0.1)

    # Kill the worker once two points are done and another runs; the sweep must resume.
    def progressed() -> bool:
        rec = service.get_job(store, job_id).record
        c = rec.counts()
        return c[PointState.SUCCEEDED] >= 2 and c[PointState.RUNNING] == 1

    wait_for(progressed, 60, "two points to finish")
    rec = service.get_job(store, job_id).record
    os.kill(rec.worker["pid"], signal.SIGKILL)
    wait_for(
        lambda: service.get_job(store, job_id).state == JobState.INTERRUPTED,
        10,
        "the job to show interrupted",
    )
    partial = store.points([job_id])
    assert partial.height >= 1  # a partial run is visible while the sweep is down

    assert service.resume_job(store, job_id, FakeSettings(), caller=Caller.CLI, poll_s=0.1)
    assert not service.resume_job(
        store, job_id, FakeSettings(), caller=Caller.CLI
    )  # one worker only
    st = service.wait_job(store, job_id, timeout_s=90, poll_s=0.1)
    assert st.state == JobState.FAILED  # finished, with a failed and a timed-out point
    rec = st.record
    by_key = {(points[k].id): k for k in points}
    states = {by_key[p.point_id]: p.state for p in rec.points}
    assert states == {
        (False, 4): PointState.SUCCEEDED,
        (False, 8): PointState.SUCCEEDED,
        (False, 48): PointState.SUCCEEDED,
        (False, 64): PointState.TIMED_OUT,
        (True, 16): PointState.FAILED,
        (True, 48): PointState.SUCCEEDED,
    }
    failed = rec.point(points[(True, 16)].id)
    assert failed.exit_code == 3
    assert (
        failed.reason
        == "benchmark exited with code 3: fake bench: RuntimeError: 12 of 40 requests failed (CUDA out of memory)"
    )
    timed_out = rec.point(points[(False, 64)].id)
    assert "timeout_s=5 s" in timed_out.reason
    grandchild = int((counts / f"{timed_out.point_id}.grandchild").read_text())
    wait_for(lambda: not alive(grandchild), 5, "the hung benchmark's child to die")

    # every point ran exactly once, across the restart
    assert {p.point_id: len((counts / p.point_id).read_text().split()) for p in rec.points} == {
        p.point_id: 1 for p in rec.points
    }
    for p in rec.points:
        assert p.elapsed_s() is not None and p.finished_at is not None
        log = (store.root / "jobs" / job_id / p.dir / "stdout.log").read_text()
        assert f"conc={p.conc} tp=8" in log
        assert service.log_tail(store, job_id, p.point_id, "serve_stdout").startswith(
            "fake server for MiniMaxAI/MiniMax-M2.5"
        )

    # the results went into the job's run as points finished
    assert rec.run_id == job_id and rec.run_ids == [job_id]
    rows = store.points([job_id]).sort(Col.DP_ATTENTION, Col.CONC)
    assert rows.select(
        Col.CONC, Col.TP, Col.EP, Col.DP_ATTENTION, Col.PRECISION, Col.MODEL
    ).rows() == [
        (4, 8, 8, False, "fp8", "MiniMaxAI/MiniMax-M2.5"),
        (8, 8, 8, False, "fp8", "MiniMaxAI/MiniMax-M2.5"),
        (48, 8, 8, False, "fp8", "MiniMaxAI/MiniMax-M2.5"),
        (48, 8, 8, True, "fp8", "MiniMaxAI/MiniMax-M2.5"),
    ]
    # tput_per_gpu = total_token_throughput / 8 GPUs; the fake writes 300 c / (1 + c/32), +10% DPA
    expected = [300 * c / (1 + c / 32) * f / 8 for c, f in ((4, 1), (8, 1), (48, 1), (48, 1.1))]
    assert rows.get_column(Col.TPUT_PER_GPU).to_list() == pytest.approx(expected, rel=1e-12)
    # the before/after /metrics scrapes became AL deltas: 4 requests x (2 drafts, 4 accepted)
    assert rows.get_column(Col.AL_MEASURED).to_list() == [3.0] * 4
    assert rows.get_column(Col.AL_SOURCE).to_list() == ["prometheus_delta"] * 4
    assert {
        p.point_id: (p.ingested, p.rows_accepted)
        for p in rec.points
        if p.state == PointState.SUCCEEDED
    } == {points[k].id: (True, 1) for k in [(False, 4), (False, 8), (False, 48), (True, 48)]}
    assert store.rejects([job_id]).height == 0
    run = store.runs().filter(pl.col(RunCol.RUN_ID) == job_id).row(0, named=True)
    assert (
        run[RunCol.SOURCE],
        run[RunCol.STATUS],
        run[RunCol.CONCLUSION],
        run[RunCol.POINT_COUNT],
    ) == (
        "runner",
        "completed",
        "failure",
        4,
    )
