"""The slurm backend against a real one-node Slurm cluster (munged, slurmctld, slurmd).

The cluster (tests/runner/slurm_cluster.py) starts once for the module; every job here is a
real `sbatch --array`, followed through `squeue`, cancelled through `scancel`. The fake server
and benchmark stand in for vLLM. The job ids sbatch answered are printed to the test log.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ingest.contract.col import Col
from ingest.store import Store
from paretolens.cli import app
from runner import service
from runner.errors import PlanError
from runner.jobs import JobState, PointRecord, PointState
from runner.plan import Plan, parse_plan
from runner.service import Caller
from tests.runner.slurm_cluster import PARTITION, SlurmCluster
from tests.runner.support import (
    FakeSettings,
    alive,
    full_sweep_plan,
    prune_output,
    serve_commands,
    wait_for,
)

pytestmark = pytest.mark.slurm

POLL = 0.3


@pytest.fixture
def show(capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    """Print to the test log even when output is captured (the sbatch job ids)."""

    def out(line: str) -> None:
        with capsys.disabled():
            print(f"\n[slurm] {line}", flush=True)

    yield out


def _plan(tmp_path: Path, counts: Path, env: dict[str, str], **slurm: Any) -> Plan:
    plan = full_sweep_plan(prune_output(tmp_path), counts)
    doc = plan.model_dump(exclude={"defaults"})
    doc["env"] = {"FAKE_COUNTS_DIR": str(counts), **env}
    doc["timeout_s"] = 100
    doc["slurm"] = {"partition": PARTITION, "time_limit_min": 3, "mem_gb": 0.5, **slurm}
    return Plan.model_validate(doc)


def _array_id(store: Store, job_id: str) -> str:
    """The id sbatch answered for the job's array (once the worker has submitted it)."""

    def arrays() -> list[dict[str, Any]]:
        got = service.get_job(store, job_id).record.backend_state.get("slurm", {})
        return [a for a in got.get("arrays", []) if a.get("job_id")]

    wait_for(lambda: arrays(), 30, f"job {job_id}'s sbatch")
    return str(arrays()[-1]["job_id"])


def _point(store: Store, job_id: str, conc: int, dpa: bool) -> PointRecord:
    pts = service.get_job(store, job_id).record.points
    return next(p for p in pts if p.conc == conc and ("DPA" in p.label) == dpa)


def _running(store: Store, job_id: str, counts: Path, conc: int, dpa: bool) -> bool:
    p = _point(store, job_id, conc, dpa)
    return p.state == PointState.RUNNING and (counts / f"{p.point_id}.grandchild").exists()


def test_a_plan_runs_as_a_slurm_job_array_through_every_state(
    tmp_path: Path, store: Store, counts: Path, slurm_cluster: SlurmCluster, show: Any
) -> None:
    """Six points in one array, at most five at once; the worker is killed and resumed mid-way.

    c4 succeeds, c8 fails (exit 3), c48 hangs until Slurm's time limit ends it (TIMEOUT), c64
    hangs until an outside `scancel` (CANCELLED), DPA c16 goes over its memory limit and DPA c48
    succeeds after waiting for an array slot (PENDING, JobArrayTaskLimit).
    """
    plan = _plan(
        tmp_path,
        counts,
        {
            "FAKE_SLEEP": "2",
            "FAKE_FAIL": "8/false",
            "FAKE_HANG": "48/false,64/false",
            "FAKE_OOM": "16/true",
        },
        array_parallelism=5,
    )
    job_id = service.launch(plan, "slurm", store, FakeSettings(), caller=Caller.CLI, poll_s=POLL)
    array = _array_id(store, job_id)
    show(f"sbatch job {array}: paretolens job {job_id}, an array of {len(plan.points())} points")
    wait_for(
        lambda: all(
            "slurm_job_id" in p.handle for p in service.get_job(store, job_id).record.points
        ),
        10,
        "the task ids in the record",
    )
    tasks = {
        p.point_id: p.handle["slurm_job_id"] for p in service.get_job(store, job_id).record.points
    }
    assert sorted(tasks.values()) == [f"{array}_{i}" for i in range(6)]
    assert slurm_cluster.task(f"{array}_0")["JobName"] == f"paretolens-{job_id}-0"
    assert slurm_cluster.task(f"{array}_0")["Partition"] == PARTITION

    # The sixth task waits for a slot: Slurm's pending reason is the point's.
    last = next(pid for pid, task in tasks.items() if task == f"{array}_5")

    def last_point() -> PointRecord:
        return service.get_job(store, job_id).record.point(last)

    wait_for(
        lambda: "JobArrayTaskLimit" in last_point().reason,
        30,
        "the last task to wait as PENDING (JobArrayTaskLimit)",
    )
    assert last_point().state == PointState.QUEUED
    assert last_point().reason == "pending in Slurm (JobArrayTaskLimit)"
    wait_for(lambda: last_point().state == PointState.RUNNING, 30, "the last task to start")
    assert last_point().reason == f"running in Slurm on {slurm_cluster.node}"

    # Both hanging points run; give one a time limit Slurm enforces, scancel the other.
    wait_for(lambda: _running(store, job_id, counts, 48, False), 60, "c48 to hang")
    wait_for(lambda: _running(store, job_id, counts, 64, False), 60, "c64 to hang")
    hang = tasks[_point(store, job_id, 48, False).point_id]
    slurm_cluster.run("scontrol", "update", f"JobId={hang}", "TimeLimit=1")
    outside = tasks[_point(store, job_id, 64, False).point_id]

    # Kill the worker while Slurm runs the array; a new one picks the job up.
    assert service.get_job(store, job_id).state == JobState.RUNNING
    worker = service.get_job(store, job_id).record.worker["pid"]
    os.kill(worker, signal.SIGKILL)
    wait_for(
        lambda: service.get_job(store, job_id).state == JobState.INTERRUPTED, 10, "interrupted"
    )
    assert slurm_cluster.task(hang)["JobState"] == "RUNNING"
    slurm_cluster.run("scancel", outside)
    assert service.resume_job(store, job_id, FakeSettings(), caller=Caller.CLI, poll_s=POLL)

    st = service.wait_job(store, job_id, timeout_s=150, poll_s=POLL)
    by = {(p.conc, "DPA" in p.label): p for p in st.record.points}
    states = {k: p.state for k, p in by.items()}
    assert states == {
        (4, False): PointState.SUCCEEDED,
        (8, False): PointState.FAILED,
        (48, False): PointState.TIMED_OUT,
        (64, False): PointState.CANCELLED,
        (16, True): PointState.FAILED,
        (48, True): PointState.SUCCEEDED,
    }, [(p.label, p.state, p.reason) for p in st.record.points]
    # A point cancelled outside paretolens makes the job cancelled (docs/runner.md).
    assert st.state == JobState.CANCELLED
    assert by[(8, False)].exit_code == 3 and "CUDA out of memory" in by[(8, False)].reason
    timed_out = by[(48, False)].reason
    assert f"slurm job {hang} hit its time limit (TIMEOUT, reason TimeLimit)" in timed_out
    assert "CANCELLED" in by[(64, False)].reason and "scancel" in by[(64, False)].reason
    assert "out of memory" in by[(16, True)].reason and "memory limit" in by[(16, True)].reason
    assert slurm_cluster.task(hang)["JobState"] == "TIMEOUT"
    assert slurm_cluster.task(outside)["JobState"] == "CANCELLED"
    assert all(p.attempt == 1 for p in st.record.points)  # nothing was submitted twice
    assert [n for n in st.record.notes if n.startswith("sbatch job")] == [
        f"sbatch job {array}: an array of 6 points (paretolens-{job_id}-0)"
    ]
    for key, state in (("TIMEOUT", hang), ("CANCELLED", outside)):
        show(f"task {state}: {key} -> {by[(48 if key == 'TIMEOUT' else 64, False)].state}")

    # Results are in the job's run, with the plan's identity.
    rows = store.points([job_id]).sort(Col.DP_ATTENTION, Col.CONC)
    assert rows.select(Col.RUN_ID, Col.CONC, Col.DP_ATTENTION).rows() == [
        (job_id, 4, False),
        (job_id, 48, True),
    ]
    assert set(rows[Col.MODEL_PREFIX]) == {"minimaxm2.5"}
    assert set(rows[Col.PRECISION]) == {"fp8"}
    assert by[(4, False)].rows_accepted == 1 and by[(48, True)].rows_accepted == 1


def test_paretolens_cancel_reaches_scancel(
    tmp_path: Path, store: Store, counts: Path, slurm_cluster: SlurmCluster, show: Any
) -> None:
    plan = _plan(
        tmp_path,
        counts,
        {"FAKE_HANG": "4/false,8/false,48/false,64/false,16/true,48/true"},
        array_parallelism=2,
    )
    job_id = service.launch(plan, "slurm", store, FakeSettings(), caller=Caller.CLI, poll_s=POLL)
    array = _array_id(store, job_id)
    show(f"sbatch job {array}: paretolens job {job_id} (to cancel)")
    wait_for(lambda: len(list(counts.glob("*.grandchild"))) >= 2, 60, "two points to hang")
    res = CliRunner().invoke(app, ["cancel", job_id, "--store", str(store.root)])
    assert res.exit_code == 0, res.output
    st = service.wait_job(store, job_id, timeout_s=60, poll_s=POLL)
    assert st.state == JobState.CANCELLED
    assert {p.state for p in st.record.points} == {PointState.CANCELLED}
    assert f"scancel {array}" in st.record.notes
    # Every task of the array is cancelled in Slurm: the running ones and the pending ones.
    for p in st.record.points:
        task = p.handle["slurm_job_id"]
        wait_for(
            lambda task=task: slurm_cluster.task(task)["JobState"] == "CANCELLED",
            30,
            f"task {task} to be CANCELLED in Slurm",
            interval=0.3,
        )
    queued = [p for p in st.record.points if p.reason == "cancelled while queued"]
    assert len(queued) == 4
    for f in counts.glob("*.grandchild"):
        pid = int(f.read_text())
        wait_for(lambda pid=pid: not alive(pid), 10, f"grandchild {pid} to die")


def test_a_node_failure_fails_the_point_with_slurms_state(
    tmp_path: Path, store: Store, counts: Path, slurm_cluster: SlurmCluster, show: Any
) -> None:
    hang_all = "4/false,8/false,48/false,64/false,16/true,48/true"
    doc = _plan(tmp_path, counts, {"FAKE_HANG": hang_all}).model_dump()
    doc["arms"] = [{**doc["arms"][0], "concs": [doc["arms"][0]["concs"][0]]}]
    plan = Plan.model_validate(doc)
    job_id = service.launch(plan, "slurm", store, FakeSettings(), caller=Caller.CLI, poll_s=POLL)
    show(f"sbatch job {_array_id(store, job_id)}: paretolens job {job_id} (node failure)")
    wait_for(lambda: len(list(counts.glob("*.grandchild"))) == 1, 60, "the point to hang")
    node = slurm_cluster.node
    slurm_cluster.run("scontrol", "update", f"NodeName={node}", "State=DOWN", "Reason=test")
    try:
        st = service.wait_job(store, job_id, timeout_s=60, poll_s=POLL)
    finally:
        slurm_cluster.run("scontrol", "update", f"NodeName={node}", "State=RESUME", check=False)
        slurm_cluster.wait_idle()
    (p,) = st.record.points
    assert p.state == PointState.FAILED and st.state == JobState.FAILED
    assert "was killed by a node failure (NODE_FAIL, reason NodeDown)" in p.reason


def _slurm_doc(**slurm: Any) -> dict[str, Any]:
    return {
        "name": "checks",
        "defaults": {"model": "m", "isl": 8, "osl": 8},
        "arms": [{"concs": [1, 2]}],
        "timeout_s": 50,
        "commands": serve_commands(),
        "slurm": {"time_limit_min": 2, **slurm},
    }


@pytest.mark.parametrize(
    ("slurm", "field", "words"),
    [
        ({"partition": "nope"}, "slurm.partition", "invalid partition"),
        ({"gpus_per_node": 2}, "slurm.gpus_per_node", "generic resource"),
        ({"mem_gb": 4000}, "slurm.mem_gb", "node configuration is not available"),
        ({"additional_parameters": {"nodes": 5}}, "slurm.additional_parameters", "not available"),
    ],
)
def test_the_cluster_refuses_plan_options_before_anything_is_recorded(
    store: Store, slurm_cluster: SlurmCluster, slurm: dict[str, Any], field: str, words: str
) -> None:
    plan = parse_plan(_slurm_doc(**slurm))
    with pytest.raises(PlanError) as err:
        service.launch(plan, "slurm", store, FakeSettings(), caller=Caller.CLI)
    assert err.value.field == field, str(err.value)
    assert "the cluster refuses it: sbatch says" in str(err.value)
    assert words.lower() in str(err.value).lower(), str(err.value)
    assert service.list_jobs(store) == []


@pytest.mark.parametrize(
    ("slurm", "field", "words"),
    [
        ({"partition": "gpu;rm"}, "slurm.partition", "does not match"),
        ({"time_limit_min": 0}, "slurm.time_limit_min", "greater than 0"),
        ({"gpus_per_node": -1}, "slurm.gpus_per_node", "greater than or equal to 0"),
        ({"time_limit_min": 1}, "slurm.time_limit_min", "shorter than timeout_s"),
        ({"additional_parameters": {"wrap": "rm -rf /"}}, "additional_parameters.wrap", "the runner sets it"),
        ({"additional_parameters": {"time": "10"}}, "additional_parameters.time", "slurm.time_limit_min"),
        ({"additional_parameters": {"frobnicate": 1}}, "additional_parameters.frobnicate", "not an sbatch option"),
        ({"additional_parameters": {"comment": "a\nb"}}, "additional_parameters.comment", "does not match"),
    ],
)  # fmt: skip
def test_plan_slurm_options_are_validated_with_the_field_named(
    slurm: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(PlanError) as err:
        parse_plan(_slurm_doc(**slurm))
    assert field in err.value.field, str(err.value)
    assert words in str(err.value), str(err.value)


def test_extra_sbatch_options_reach_the_job(
    store: Store, slurm_cluster: SlurmCluster, show: Any, tmp_path: Path
) -> None:
    doc = _slurm_doc(
        partition=PARTITION, additional_parameters={"comment": "paretolens-test", "nice": 5}
    )
    doc["commands"] = {"script": ["true"], "ready_timeout_s": 10}
    plan = parse_plan(doc)
    job_id = service.launch(plan, "slurm", store, FakeSettings(), caller=Caller.CLI, poll_s=POLL)
    array = _array_id(store, job_id)
    show(f"sbatch job {array}: paretolens job {job_id} (extra sbatch options)")
    info = slurm_cluster.task(f"{array}_0")
    assert info["Comment"] == "paretolens-test" and info["Nice"] == "5"
    assert info["Partition"] == PARTITION and info["TimeLimit"] == "00:02:00"
    st = service.wait_job(store, job_id, timeout_s=60, poll_s=POLL)
    # `true` exits 0 and writes no result: failed, with the executor's reason.
    assert {p.state for p in st.record.points} == {PointState.FAILED}
    assert all("wrote no result file" in p.reason for p in st.record.points)
    script = (store.root / "jobs" / job_id / "slurm" / "array-0.sh").read_text()
    assert "-m runner.execute --array" in script and '"$SLURM_ARRAY_TASK_ID"' in script
