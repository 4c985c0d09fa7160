"""The github backend against a loopback replay of the Actions API: dispatch, find, poll, ingest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from pydantic import SecretStr

from ingest.contract.schema import RunCol
from ingest.store import Store
from runner import service
from runner.backends.github import dispatch_groups
from runner.jobs import JobRecord, JobState, JobTable, PointState, now
from runner.plan import Plan
from runner.service import Caller
from runner.sources import load_plan
from runner.worker import drive
from tests.runner.github_replay import REPO, GitHubReplay, serve
from tests.runner.support import FakeSettings

MASTER = Path(__file__).resolve().parents[1] / "fixtures/inferencex/configs/nvidia-master.yaml"
KEYS = ["minimaxm3-fp8-h200-vllm-agentic-mtp", "dsr1-fp4-b200-dynamo-trt"]
TOKEN = "ghs_replaytoken"


def _plan(**github: Any) -> Plan:
    opts = {"github": {"poll_interval_s": 0.05, "find_timeout_s": 5, **github}}
    return load_plan(MASTER, options=opts, config_keys=KEYS, name="agentx-full")


def _settings(replay: GitHubReplay) -> FakeSettings:
    return FakeSettings(github_token=SecretStr(TOKEN), github_api_url=replay.url)


def _launch(store: Store, replay: GitHubReplay, plan: Plan) -> str:
    return service.launch(
        plan, "github", store, _settings(replay), caller=Caller.CLI, start_worker=False
    )


def test_points_group_into_one_dispatch_per_conc_list() -> None:
    plan = _plan()
    job = JobRecord(
        id="j-20260101-000000-abcdef",
        backend="github",
        plan=plan,
        run_id="x",
        created_at=now(),
        updated_at=now(),
        points=[],
    )
    groups = dispatch_groups(job)
    dsr1 = [6, 10, 15, 25, 30, 50, 60, 66, 90, 100, 370, 548, 658, 837, 1096, 1606, 1691, 2222]
    files = "--config-files configs/nvidia-master.yaml --runner-config configs/runners.yaml"
    assert [(g["config_keys"], g["concs"], g["command"]) for g in groups] == [  # master-file order
        (
            ["dsr1-fp4-b200-dynamo-trt"],
            dsr1,
            f"test-config --config-keys dsr1-fp4-b200-dynamo-trt --conc {' '.join(map(str, dsr1))} {files}",
        ),
        (
            ["minimaxm3-fp8-h200-vllm-agentic-mtp"],
            [1, 2, 4, 6, 8, 10, 12, 14],
            f"test-config --config-keys minimaxm3-fp8-h200-vllm-agentic-mtp --conc 1 2 4 6 8 10 12 14 {files}",
        ),
    ]
    assert sum(len(g["point_ids"]) for g in groups) == len(plan.points())


def test_dispatch_find_poll_and_ingest(store: Store) -> None:
    with serve(GitHubReplay(token=TOKEN)) as replay:
        job_id = _launch(store, replay, _plan())
        job = drive(store, job_id, github_token=TOKEN)
    assert job.state == JobState.SUCCEEDED
    assert {p.state for p in job.points} == {PointState.SUCCEEDED}
    posts = replay.dispatches()
    assert [r.body for r in posts] == [
        {
            "ref": "main",
            "inputs": {
                "generate-cli-command": g["command"],
                "test-name": f"agentx-full [pl-{job_id}-{i}]",
            },
        }
        for i, g in enumerate(job.backend_state["github"]["dispatches"])
    ]
    assert {r.headers["Authorization"] for r in replay.requests} == {f"Bearer {TOKEN}"}
    lookups = [r for r in replay.requests if r.path.endswith("/workflows/e2e-tests.yml/runs")]
    assert lookups and all(r.query["event"] == ["workflow_dispatch"] for r in lookups)
    # the decoy run (id ...001, created first) is not taken: the marker picks ours
    assert job.run_ids == ["30000000002", "30000000003"]
    mini = job.backend_state["github"]["dispatches"][1]["point_ids"]
    assert [p.handle["run_id"] for p in job.points if p.point_id in mini] == ["30000000003"] * 8
    for rid in job.run_ids:
        pts = store.points([rid])
        assert pts.height == 5  # the five AgentX aggregates of results_bmk
        run = store.runs().filter(pl.col(RunCol.RUN_ID) == rid).row(0, named=True)
        assert (run[RunCol.SOURCE], run[RunCol.REPO], run[RunCol.STATUS]) == (
            "github",
            REPO,
            "completed",
        )
        assert run[RunCol.TITLE].startswith("e2e Test - agentx-full [pl-")
    first = job.point(job.backend_state["github"]["dispatches"][0]["point_ids"][0])
    assert (first.ingested, first.rows_accepted) == (True, 5)


def test_the_detached_worker_gets_the_token_and_drives_the_job(store: Store) -> None:
    with serve(GitHubReplay(token=TOKEN)) as replay:
        job_id = service.launch(
            _plan(), "github", store, _settings(replay), caller=Caller.CLI, poll_s=0.05
        )
        st = service.wait_job(store, job_id, timeout_s=240, poll_s=0.1)
    assert st.state == JobState.SUCCEEDED, st.record.error
    assert "ghs_replaytoken" not in (store.root / "jobs" / job_id / "job.json").read_text()
    assert "ghs_replaytoken" not in (store.root / "jobs" / job_id / "worker.log").read_text()


def test_a_refused_dispatch_fails_the_job_with_the_reason(store: Store) -> None:
    with serve(GitHubReplay(token=TOKEN, dispatch_status=403)) as replay:
        job = drive(store, _launch(store, replay, _plan()), github_token=TOKEN)
    assert job.state == JobState.FAILED
    assert "HTTP 403 Resource not accessible by integration" in job.error
    assert {p.state for p in job.points} == {PointState.FAILED}
    assert job.points[0].reason.startswith(
        "job failed: workflow dispatch of e2e-tests.yml failed: POST "
    )


def test_cancel_cancels_the_run_and_ingests_what_it_uploaded(store: Store) -> None:
    replay = GitHubReplay(token=TOKEN, statuses=[("in_progress", None)])
    with serve(replay):
        job_id = _launch(store, replay, _plan())
        table = JobTable(store)

        def cancel_once_running(r: JobRecord) -> None:
            r.cancel_requested = True

        # dispatch and see the runs running, then ask for a cancel and drive to the end
        from runner.backends.base import BackendContext
        from runner.backends.github import GithubBackend
        from runner.worker import apply_updates

        backend = GithubBackend(BackendContext(store, table, TOKEN))
        apply_updates(table, job_id, backend.submit(table.get(job_id)))
        apply_updates(table, job_id, backend.status(table.get(job_id)))
        assert {p.state for p in table.get(job_id).points} == {PointState.QUEUED}
        apply_updates(table, job_id, backend.status(table.get(job_id)))
        assert {p.state for p in table.get(job_id).points} == {PointState.RUNNING}
        table.update(job_id, cancel_once_running)
        job = drive(store, job_id, github_token=TOKEN)
    cancels = [r.path for r in replay.requests if r.path.endswith("/cancel")]
    assert sorted(cancels) == [f"/repos/{REPO}/actions/runs/{rid}/cancel" for rid in job.run_ids]
    assert job.state == JobState.CANCELLED
    assert {p.state for p in job.points} == {PointState.CANCELLED}
    assert store.points(job.run_ids).height == 10  # what the cancelled runs had uploaded


def test_a_restarted_worker_finds_the_run_instead_of_dispatching_twice(store: Store) -> None:
    with serve(GitHubReplay(token=TOKEN)) as replay:
        job_id = _launch(store, replay, _plan())
        table = JobTable(store)
        groups = dispatch_groups(table.get(job_id))
        # A worker died right after its first POST: the intent is recorded, the run exists.
        groups[0].update(state="dispatching", dispatched_at=now().isoformat())
        replay.add_run(f"e2e Test - agentx-full [{groups[0]['marker']}]")

        def crashed(r: JobRecord) -> None:
            r.backend_state = {
                **r.backend_state,
                "github": {**r.backend_state["github"], "dispatches": groups},
            }
            r.state = JobState.RUNNING

        table.update(job_id, crashed)
        assert service.get_job(store, job_id).state == JobState.INTERRUPTED
        job = drive(store, job_id, github_token=TOKEN)
    assert job.state == JobState.SUCCEEDED
    assert len(replay.dispatches()) == 1  # only the second group was dispatched now
    assert job.run_ids[0] == "30000000002"


def test_launch_without_a_token_is_refused(store: Store) -> None:
    from runner.errors import BackendError

    try:
        service.launch(
            _plan(), "github", store, FakeSettings(), caller=Caller.CLI, start_worker=False
        )
    except BackendError as exc:
        assert "GITHUB_TOKEN" in str(exc)
    else:
        raise AssertionError("launch without a GitHub token must be refused")
    assert JobTable(store).list() == []


def test_a_run_cancelled_on_github_ends_the_job_cancelled_with_the_reason(store: Store) -> None:
    statuses = [("queued", None), ("in_progress", None), ("completed", "cancelled")]
    with serve(GitHubReplay(token=TOKEN, statuses=statuses)) as replay:
        job_id = _launch(store, replay, _plan())
        st = service.get_job(store, job_id)
        assert st.state == JobState.PENDING  # recorded; no worker has taken it yet
        assert {p.state for p in st.record.points} == {PointState.PENDING}
        job = drive(store, job_id, github_token=TOKEN)
    assert job.state == JobState.CANCELLED
    assert {p.state for p in job.points} == {PointState.CANCELLED}
    assert not job.cancel_requested  # nobody here asked: the run was cancelled on GitHub
    for p in job.points:
        rid = p.handle["run_id"]
        assert p.reason == (
            f"run {rid} was cancelled on GitHub Actions: conclusion cancelled "
            f"(https://github.com/{REPO}/actions/runs/{rid})"
        )
    # What the cancelled runs had uploaded is ingested all the same.
    assert store.points(job.run_ids).height == 10
    assert not [r for r in replay.requests if r.path.endswith("/cancel")]


def test_a_run_whose_artifacts_expired_fails_the_job_with_the_reason(store: Store) -> None:
    with serve(GitHubReplay(token=TOKEN, artifact_status=410)) as replay:
        job = drive(store, _launch(store, replay, _plan()), github_token=TOKEN)
    assert {p.state for p in job.points} == {PointState.SUCCEEDED}  # the runs themselves did
    assert job.state == JobState.FAILED
    first = job.run_ids[0]
    assert job.error.startswith(f"the artifacts of run {first} have expired (HTTP 410 Gone: ")
    assert "nothing was ingested: run the points again" in job.error
    assert "Artifact has expired" in job.error or "HTTP 410" in job.error
    assert any("have expired (HTTP 410 Gone" in n for n in job.notes)
    assert store.points(job.run_ids).height == 0
    dispatches = job.backend_state["github"]["dispatches"]
    assert all(d["expired"] and d["collected"] for d in dispatches)
    # Each run's artifacts were asked for once: an expired artifact is not retried.
    zips = [r for r in replay.requests if r.path.endswith("/zip")]
    assert len(zips) == len(job.run_ids)
