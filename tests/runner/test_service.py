"""The function API the web app calls: the launch gate, jobs, cancel, resume, log tails."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ingest.store import Store
from paretolens.settings import Settings
from runner import service
from runner.backends.base import BackendContext
from runner.errors import JobBusy, JobNotFound, LaunchRefused, PlanError
from runner.jobs import JobRecord, JobState, JobTable, PointState
from runner.plan import parse_plan
from runner.service import Caller
from runner.worker import _ingest_finished, make_backend
from tests.runner.support import FakeSettings, serve_commands

PLAN: dict[str, Any] = {
    "name": "svc",
    "defaults": {"model": "m/x", "isl": 1024, "osl": 1024, "framework": "vllm", "precision": "fp8"},
    "arms": [{"concs": [1, 2]}],
    "commands": serve_commands(),
}

TOKEN = "s3cret"
WEB = FakeSettings(token=SecretStr(TOKEN))  # a web caller with the app token configured


@pytest.mark.parametrize(
    ("settings", "token", "refusal"),
    [
        (FakeSettings(launch_enabled=False), None, "launching is disabled"),
        (
            FakeSettings(launch_enabled=False, token=SecretStr("s3cret")),
            "s3cret",
            "launching is disabled",
        ),
        (FakeSettings(token=SecretStr("s3cret")), None, "wrong or missing launch token"),
        (FakeSettings(token=SecretStr("s3cret")), "guess", "wrong or missing launch token"),
        (
            FakeSettings(host="0.0.0.0"),
            None,
            "needs a token and none is configured \\(the server listens on 0.0.0.0, beyond localhost\\)",
        ),
        (FakeSettings(host="192.168.1.7", token=SecretStr("")), None, "beyond localhost"),
        (FakeSettings(host="::"), None, "beyond localhost"),
        (FakeSettings(token=SecretStr("s3cret")), "s3cret", None),
        (FakeSettings(host="0.0.0.0", token=SecretStr("s3cret")), "s3cret", None),
        # On loopback too: any page the user opens could otherwise POST a launch (CSRF).
        (FakeSettings(), None, "needs a token and none is configured; set PARETOLENS_TOKEN"),
        (FakeSettings(host="localhost"), None, "needs a token"),
        (FakeSettings(host="::1"), "anything", "needs a token"),
    ],
)
def test_the_gate_for_web_requests(
    settings: FakeSettings, token: str | None, refusal: str | None
) -> None:
    if refusal is None:
        service.authorize(settings, token, caller=Caller.WEB)
        return
    with pytest.raises(LaunchRefused, match=refusal):
        service.authorize(settings, token, caller=Caller.WEB)


def test_the_cli_is_not_gated_and_real_settings_fit() -> None:
    service.authorize(FakeSettings(launch_enabled=False, host="0.0.0.0"), None, caller=Caller.CLI)
    real = Settings(launch_enabled=True, token=SecretStr("t"))
    service.authorize(real, "t", caller=Caller.WEB)
    with pytest.raises(LaunchRefused):
        service.authorize(Settings(), None, caller=Caller.WEB)  # off unless configured


def test_refused_requests_change_nothing(store: Store) -> None:
    off = FakeSettings(launch_enabled=False)
    with pytest.raises(LaunchRefused):
        service.launch(parse_plan(PLAN), "local", store, off)
    assert service.list_jobs(store) == []
    job_id = service.launch(parse_plan(PLAN), "local", store, WEB, token=TOKEN, start_worker=False)
    for call in (service.cancel_job, service.resume_job):
        with pytest.raises(LaunchRefused):
            call(store, job_id, off, token="x")  # type: ignore[operator]
    assert service.get_job(store, job_id).record.cancel_requested is False


def test_launch_checks_the_plan_and_the_backend(store: Store) -> None:
    no_commands = parse_plan({k: v for k, v in PLAN.items() if k != "commands"})
    with pytest.raises(PlanError, match=r"^commands: the local backend needs commands"):
        service.launch(no_commands, "local", store, WEB, token=TOKEN, start_worker=False)
    with pytest.raises(Exception, match="unknown backend 'kubernetes'"):
        service.launch(parse_plan(PLAN), "kubernetes", store, WEB, token=TOKEN, start_worker=False)
    assert service.list_jobs(store) == []


def test_a_web_launch_with_the_token_runs(store: Store) -> None:
    settings = FakeSettings(token=SecretStr("s3cret"), host="0.0.0.0")
    job_id = service.launch(parse_plan(PLAN), "local", store, settings, token="s3cret", poll_s=0.1)
    st = service.wait_job(store, job_id, timeout_s=60, poll_s=0.1)
    assert st.state == JobState.SUCCEEDED
    assert (st.done, st.total, st.counts()[PointState.SUCCEEDED]) == (2, 2, 2)
    assert st.record.points[0].rows_accepted == 1
    tail = service.log_tail(store, job_id, st.record.points[0].point_id, "stdout")
    assert tail.startswith("fake bench: model=m/x conc=1")
    assert service.log_tail(store, job_id, st.record.points[0].point_id, "stderr") == ""
    short = service.log_tail(store, job_id, st.record.points[0].point_id, "stdout", max_bytes=30)
    assert 0 < len(short) <= 30 and tail.endswith(short)
    with pytest.raises(KeyError):
        service.log_tail(store, job_id, "../../../etc/passwd")


def test_cancel_without_a_worker_finishes_the_record(store: Store) -> None:
    job_id = service.launch(parse_plan(PLAN), "local", store, WEB, token=TOKEN, start_worker=False)
    st = service.cancel_job(store, job_id, WEB, token=TOKEN)
    assert st.state == JobState.CANCELLED
    assert [(p.state, p.reason) for p in st.record.points] == [
        (PointState.CANCELLED, "cancelled before it started")
    ] * 2
    assert (
        service.cancel_job(store, job_id, WEB, token=TOKEN).state == JobState.CANCELLED
    )  # idempotent
    assert not service.resume_job(store, job_id, WEB, token=TOKEN)  # nothing to resume


def test_resume_interrupted_starts_workers_for_orphans(store: Store) -> None:
    job_id = service.launch(parse_plan(PLAN), "local", store, WEB, token=TOKEN, start_worker=False)
    assert service.get_job(store, job_id).state == JobState.PENDING
    assert service.resume_interrupted(store, FakeSettings()) == [job_id]
    st = service.wait_job(store, job_id, timeout_s=60, poll_s=0.1)
    assert st.state == JobState.SUCCEEDED
    assert service.resume_interrupted(store, FakeSettings()) == []


def test_the_job_table(store: Store, tmp_path: Path) -> None:
    table = JobTable(store)
    with pytest.raises(JobNotFound):
        table.get("j-20260101-000000-abcdef")
    for bad in ("../x", "j-1", "j-20260101-000000-ABCDEF/../../y"):
        with pytest.raises(JobNotFound):
            table.job_dir(bad)
    job = table.create(parse_plan(PLAN), "local")
    assert job.run_id == job.id and job.run_ids == [job.id]
    assert [p.state for p in job.points] == [PointState.PENDING] * 2
    assert table.list() == [job]
    # the record is always whole JSON; an unreadable one is skipped, not fatal
    doc = json.loads((store.root / "jobs" / job.id / "job.json").read_text())
    assert doc["plan"]["name"] == "svc"
    other = table.create(parse_plan({**PLAN, "run_id": "my-run"}), "local")
    assert other.run_id == "my-run"
    (store.root / "jobs" / other.id / "job.json").write_text("{")
    assert [j.id for j in table.list()] == [job.id]

    # concurrent updates are serialised by the record lock: none is lost
    def bump(r: JobRecord) -> None:
        r.notes = [*r.notes, "x"]

    threads = [
        threading.Thread(target=lambda: [table.update(job.id, bump) for _ in range(10)])
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(table.get(job.id).notes) == 40

    with table.worker_lock(job.id):
        assert table.worker_alive(job.id)
        with pytest.raises(JobBusy), table.worker_lock(job.id):
            pass
    assert not table.worker_alive(job.id)


def test_final_states() -> None:
    table_plan = parse_plan(PLAN)
    from runner.jobs import PointRecord, now

    def rec(*states: PointState, **kw: Any) -> JobRecord:
        pts = [
            PointRecord(
                point_id=f"pt-{i:012x}", index=i, arm_index=0, label="x", conc=1, dir="d", state=s
            )
            for i, s in enumerate(states)
        ]
        return JobRecord(
            id="j-20260101-000000-abcdef",
            backend="local",
            plan=table_plan,
            run_id="r",
            created_at=now(),
            updated_at=now(),
            points=pts,
            **kw,
        )

    assert rec(PointState.SUCCEEDED, PointState.SUCCEEDED).final_state() == JobState.SUCCEEDED
    assert rec(PointState.SUCCEEDED, PointState.TIMED_OUT).final_state() == JobState.FAILED
    assert rec(PointState.SUCCEEDED, PointState.CANCELLED).final_state() == JobState.CANCELLED
    # A cancel that came after every point succeeded cancelled nothing.
    assert rec(PointState.SUCCEEDED, cancel_requested=True).final_state() == JobState.SUCCEEDED
    assert (
        rec(PointState.SUCCEEDED, PointState.FAILED, cancel_requested=True).final_state()
        == JobState.CANCELLED
    )
    assert rec(PointState.SUCCEEDED, error="dispatch refused").final_state() == JobState.FAILED


def test_a_point_ingested_again_after_a_crash_keeps_its_row_count(store: Store) -> None:
    # The worker can die after the store write and before the record says so; the resumed
    # worker ingests the point again, finds its row already stored, and still reports 1 row.
    job_id = service.launch(
        parse_plan(PLAN), "local", store, FakeSettings(), caller=Caller.CLI, poll_s=0.1
    )
    st = service.wait_job(store, job_id, timeout_s=60, poll_s=0.1)
    assert st.state == JobState.SUCCEEDED
    pid = st.record.points[0].point_id
    stored = store.points([st.record.run_id]).height
    table = JobTable(store)

    def forget(r: JobRecord) -> None:
        p = r.point(pid)
        p.ingested, p.rows_accepted = False, 0

    job = table.update(job_id, forget)
    backend = make_backend(job.backend, BackendContext(store, table, None))
    p = _ingest_finished(table, backend, job).point(pid)
    assert (p.ingested, p.rows_accepted, p.rows_duplicate, p.rows_rejected) == (True, 1, 1, 0)
    assert store.points([st.record.run_id]).height == stored  # nothing doubled


def test_a_launched_jobs_ingest_reads_the_run_keys_beside_its_results(store: Store) -> None:
    # Issue 23, item 5: a launched job's results are ingested like any directory: a
    # `paretolens.yaml` (run keys) and a `.run.json` beside them are read, under the job's own
    # catalog fields (its title, source, status).
    from ingest.contract.schema import RunCol
    from runner.execute import results_dir

    job_id = service.launch(
        parse_plan(PLAN), "local", store, FakeSettings(), caller=Caller.CLI, poll_s=0.1
    )
    st = service.wait_job(store, job_id, timeout_s=60, poll_s=0.1)
    assert st.state == JobState.SUCCEEDED
    table = JobTable(store)
    pid = st.record.points[0].point_id
    results = results_dir(table.point_dir(job_id, pid))
    (results / "paretolens.yaml").write_text("branch: tune/fp8-kv\ntitle: not the job's\n")
    (results / ".run.json").write_text(
        json.dumps({"head_sha": "0123456789abcdef0123456789abcdef01234567", "branch": "old"})
    )

    def forget(r: JobRecord) -> None:
        r.point(pid).ingested = False

    job = table.update(job_id, forget)
    backend = make_backend(job.backend, BackendContext(store, table, None))
    assert _ingest_finished(table, backend, job).point(pid).rows_rejected == 0
    run = store.runs().filter(store.runs()[RunCol.RUN_ID] == st.record.run_id).row(0, named=True)
    assert run[RunCol.BRANCH] == "tune/fp8-kv"  # the yaml over the .run.json
    assert run[RunCol.HEAD_SHA] == "0123456789abcdef0123456789abcdef01234567"
    assert run[RunCol.TITLE] == f"svc (local job {job_id})"  # the job's own title wins
    assert run[RunCol.SOURCE] == "runner"


def test_a_record_read_before_its_worker_finished_is_read_again_once_the_lock_is_free(
    store: Store,
) -> None:
    # A status reader reads the record (running), then the worker writes its final record and
    # lets go of the lock, then the reader finds the lock free: the job was cancelled, not
    # interrupted (seen once in CI as a cancelled Slurm job reported "interrupted").
    table = JobTable(store)
    job = table.create(parse_plan(PLAN), "local")

    def running(r: JobRecord) -> None:
        r.state = JobState.RUNNING

    stale = table.update(job.id, running)

    def cancelled(r: JobRecord) -> None:
        r.state = JobState.CANCELLED

    table.update(job.id, cancelled)
    assert not table.worker_alive(job.id)
    st = service.status_of(table, stale)
    assert (st.state, st.record.state) == (JobState.CANCELLED, JobState.CANCELLED)
    # a record still running once its lock is free is an interrupted job
    table.update(job.id, running)
    assert service.status_of(table, table.get(job.id)).state == JobState.INTERRUPTED
