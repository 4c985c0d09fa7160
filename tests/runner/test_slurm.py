"""The slurm backend with ``cluster: local``: the same pruned plan run by the local backend,
`array_parallelism` points at once."""

from __future__ import annotations

from pathlib import Path

from ingest.contract.col import Col
from ingest.store import Store
from runner import service
from runner.jobs import JobState, PointState
from runner.plan import Plan
from runner.service import Caller
from tests.runner.support import FakeSettings, alive, full_sweep_plan, prune_output, wait_for

SLURM = {
    "cluster": "local",
    "time_limit_min": 5,
    "partition": "gpu",
    "gpus_per_node": 0,
    "array_parallelism": 6,
}


def _slurm_plan(tmp_path: Path, counts: Path) -> Plan:
    plan = full_sweep_plan(prune_output(tmp_path), counts)
    # array_parallelism 6 starts every point at once: allow for a loaded machine.
    return Plan.model_validate(
        {**plan.model_dump(exclude={"defaults"}), "slurm": SLURM, "timeout_s": 10}
    )


def test_the_pruned_plan_runs_with_cluster_local(
    tmp_path: Path, store: Store, counts: Path
) -> None:
    plan = _slurm_plan(tmp_path, counts)
    job_id = service.launch(plan, "slurm", store, FakeSettings(), caller=Caller.CLI, poll_s=0.2)
    st = service.wait_job(store, job_id, timeout_s=150, poll_s=0.2)
    assert st.state == JobState.FAILED, [(p.label, p.state, p.reason) for p in st.record.points]
    states = {(p.conc, "DPA" in p.label): p.state for p in st.record.points}
    assert states == {
        (4, False): PointState.SUCCEEDED,
        (8, False): PointState.SUCCEEDED,
        (48, False): PointState.SUCCEEDED,
        (64, False): PointState.TIMED_OUT,
        (16, True): PointState.FAILED,
        (48, True): PointState.SUCCEEDED,
    }
    for p in st.record.points:
        assert (store.root / "jobs" / job_id / "points" / p.point_id / "executor.log").exists()
        assert len((counts / p.point_id).read_text().split()) == 1
        assert p.attempt == 1
    timed_out = next(p for p in st.record.points if p.state == PointState.TIMED_OUT)
    grandchild = int((counts / f"{timed_out.point_id}.grandchild").read_text())
    wait_for(lambda: not alive(grandchild), 5, "the hung benchmark's child to die")
    rows = store.points([job_id]).sort(Col.DP_ATTENTION, Col.CONC)
    assert rows.select(Col.CONC, Col.DP_ATTENTION, Col.AL_MEASURED).rows() == [
        (4, False, 3.0),
        (8, False, 3.0),
        (48, False, 3.0),
        (48, True, 3.0),
    ]


def test_cancelling_a_slurm_job_stops_its_points(
    tmp_path: Path, store: Store, counts: Path
) -> None:
    plan = Plan.model_validate(
        {
            **_slurm_plan(tmp_path, counts).model_dump(exclude={"defaults"}),
            "env": {
                "FAKE_COUNTS_DIR": str(counts),
                "FAKE_HANG": "4/false,8/false,48/false,64/false,16/true,48/true",
            },
            "timeout_s": 120,
        }
    )
    job_id = service.launch(plan, "slurm", store, FakeSettings(), caller=Caller.CLI, poll_s=0.2)
    wait_for(lambda: len(list(counts.glob("*.grandchild"))) >= 1, 120, "a benchmark to hang")
    service.cancel_job(store, job_id, FakeSettings(), caller=Caller.CLI)
    st = service.wait_job(store, job_id, timeout_s=60, poll_s=0.2)
    assert st.state == JobState.CANCELLED
    assert {p.state for p in st.record.points} == {PointState.CANCELLED}
    for f in counts.glob("*.grandchild"):
        pid = int(f.read_text())
        wait_for(lambda pid=pid: not alive(pid), 10, f"grandchild {pid} to die")
