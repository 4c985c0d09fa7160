"""The runner's function API, for the CLI and the web app (docs/runner.md documents it).

Every state-changing call goes through `authorize`, the one place that decides whether a request
may launch, cancel or resume: web requests are refused when launching is disabled, when a token is
configured and the request's token is wrong or missing, and when the server listens beyond
localhost with no token configured. The CLI is the local user's own shell and is not gated.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import subprocess
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import SecretStr

from ingest.contract.schema import RunCol
from ingest.store import Store
from runner.backends.base import BackendContext, PointUpdate, detached, outcome_update
from runner.errors import BackendError, LaunchRefused
from runner.execute import read_outcome
from runner.jobs import JobRecord, JobState, JobTable, PointState
from runner.plan import BACKENDS, BackendName, Plan
from runner.worker import BACKENDS as BACKEND_TYPES
from runner.worker import EXIT_BUSY, _ingest_finished, apply_updates, make_backend, run_meta

JobId = str
LogStream = Literal["stdout", "stderr", "serve_stdout", "serve_stderr", "executor"]
LOG_FILES: dict[LogStream, str] = {
    "stdout": "stdout.log",
    "stderr": "stderr.log",
    "serve_stdout": "serve.stdout.log",
    "serve_stderr": "serve.stderr.log",
    "executor": "executor.log",
}


class Caller(StrEnum):
    """Who asks: the web app (gated by `authorize`) or the local CLI (not gated)."""

    WEB = "web"
    CLI = "cli"


class LaunchSettings(Protocol):
    """The settings the runner reads (`paretolens.settings.Settings` satisfies it)."""

    token: SecretStr | None
    launch_enabled: bool
    host: str
    github_token: SecretStr | None
    github_api_url: str
    github_repo: str


@dataclass(frozen=True)
class JobStatus:
    """A job record with what only the live system knows: is a worker driving it."""

    record: JobRecord
    state: JobState
    worker_alive: bool

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def total(self) -> int:
        return len(self.record.points)

    @property
    def done(self) -> int:
        return self.record.done

    def counts(self) -> dict[PointState, int]:
        """Points per state."""
        return self.record.counts()


def is_loopback(host: str) -> bool:
    """Whether a listen address is this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def authorize(settings: LaunchSettings, token: str | None, *, caller: Caller) -> None:
    """Decide whether a caller may change runner state (launch, cancel, resume).

    Raises:
        LaunchRefused: with the reason and how to fix it.
    """
    if caller == Caller.CLI:
        return
    if not settings.launch_enabled:
        raise LaunchRefused(
            "launching is disabled; set PARETOLENS_LAUNCH_ENABLED=true (and PARETOLENS_TOKEN) to enable it"
        )
    expected = settings.token.get_secret_value() if settings.token is not None else ""
    if not expected:
        # Changing state from the web always needs a token, on loopback too.
        where = (
            ""
            if is_loopback(settings.host)
            else f" (the server listens on {settings.host}, beyond localhost)"
        )
        raise LaunchRefused(
            f"launching from the web needs a token and none is configured{where}; set PARETOLENS_TOKEN"
        )
    if token is None or not hmac.compare_digest(token.encode(), expected.encode()):
        raise LaunchRefused("wrong or missing launch token")


def launch(
    plan: Plan,
    backend: BackendName | str,
    store: Store,
    settings: LaunchSettings,
    *,
    token: str | None = None,
    caller: Caller = Caller.WEB,
    start_worker: bool = True,
    poll_s: float | None = None,
) -> JobId:
    """Record a job for `plan` on `backend` and start its worker; returns the job id.

    Raises:
        LaunchRefused: when `authorize` refuses.
        PlanError: when the plan lacks what the backend needs, or the backend's system refuses
            it (a Slurm cluster asked with ``sbatch --test-only``).
        BackendError: when the github backend has no token, or Slurm cannot be asked.
    """
    authorize(settings, token, caller=caller)
    if backend not in BACKENDS:
        raise BackendError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    name: BackendName = backend
    plan.require(name)
    BACKEND_TYPES[name].preflight(plan)
    state: dict[str, Any] = {}
    if name == "github":
        if settings.github_token is None:
            raise BackendError("the github backend needs a GitHub token: set GITHUB_TOKEN")
        gh = plan.github
        state["github"] = {
            "api_url": (gh.api_url if gh and gh.api_url else settings.github_api_url).rstrip("/"),
            "repo": gh.repo if gh and gh.repo else settings.github_repo,
        }
    job = JobTable(store).create(plan, name, backend_state=state)
    if start_worker:
        spawn_worker(store, job.id, settings=settings, poll_s=poll_s)
    return job.id


def spawn_worker(
    store: Store, job_id: JobId, *, settings: LaunchSettings, poll_s: float | None = None
) -> bool:
    """Start a detached worker for the job (it survives this process).

    Returns once the worker holds the job's lock: True, or False when another worker already
    drives the job.

    Raises:
        BackendError: when the worker does not start.
    """
    table = JobTable(store)
    job_dir = table.job_dir(job_id)
    argv = ["-m", "runner.worker", "--daemon", "--store", store.uri, job_id]
    if poll_s is not None:
        argv[3:3] = ["--poll", str(poll_s)]
    env = {}
    if table.get(job_id).backend == "github" and settings.github_token is not None:
        env["GITHUB_TOKEN"] = settings.github_token.get_secret_value()
    proc = detached(argv, log=job_dir / "worker.log", cwd=job_dir, extra_env=env)
    try:
        code = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = None
    if code not in (0, EXIT_BUSY):
        log = job_dir / "worker.log"
        raise BackendError(f"the worker of job {job_id} did not start (see {log})")
    return code == 0


def status_of(table: JobTable, record: JobRecord) -> JobStatus:
    """The live status of a record."""
    alive = table.worker_alive(record.id)
    if record.state == JobState.RUNNING and not alive:
        # A worker writes its final record before it lets go of the lock, so a record read
        # before the lock was found free may predate that write: read it again (a job that is
        # still running once its lock is free was interrupted).
        record = table.get(record.id)
    state = record.state
    if state == JobState.RUNNING and not alive:
        state = JobState.INTERRUPTED
    return JobStatus(record=record, state=state, worker_alive=alive)


def list_jobs(store: Store) -> list[JobStatus]:
    """Every job of the store, newest first."""
    table = JobTable(store)
    return [status_of(table, r) for r in table.list()]


def get_job(store: Store, job_id: JobId) -> JobStatus:
    """One job.

    Raises:
        JobNotFound: when there is no such job.
    """
    table = JobTable(store)
    return status_of(table, table.get(job_id))


def cancel_job(
    store: Store,
    job_id: JobId,
    settings: LaunchSettings,
    *,
    token: str | None = None,
    caller: Caller = Caller.WEB,
) -> JobStatus:
    """Cancel a job: stop everything it started. Returns its status after the request.

    With a live worker the worker finishes the record; without one this call does.

    Raises:
        LaunchRefused: when `authorize` refuses.
        JobNotFound: when there is no such job.
    """
    authorize(settings, token, caller=caller)
    table = JobTable(store)
    if table.get(job_id).state.terminal:
        return get_job(store, job_id)

    def flag(r: JobRecord) -> None:
        if not r.state.terminal:  # a job that finished meanwhile is not cancelled after the fact
            r.cancel_requested = True

    job = table.update(job_id, flag)
    if job.state.terminal:
        return get_job(store, job_id)
    token_value = settings.github_token.get_secret_value() if settings.github_token else None
    backend = make_backend(job.backend, BackendContext(store, table, token_value))
    if not table.worker_alive(job_id):
        # Points whose executor finished while no worker watched (an interrupted job) keep the
        # outcome they wrote, and their results are ingested below: only the rest is cancelled.
        job = apply_updates(table, job_id, _written_outcomes(table, job))
    updates = backend.cancel(job)
    if not table.worker_alive(job_id):
        job = apply_updates(table, job_id, updates)

        def finish(r: JobRecord) -> None:
            for p in r.points:
                if not p.state.terminal:
                    p.state, p.reason = (
                        PointState.CANCELLED,
                        "cancelled while no worker was running",
                    )
            r.state = r.final_state()
            r.finished_at = r.updated_at

        job = table.update(job_id, finish)
        if job.backend != "github":  # local files only: no network call in a cancel request
            job = _ingest_finished(table, backend, job)
            if job.run_id in store.run_ids():
                with store.lock():
                    store.upsert_run(
                        {RunCol.RUN_ID: job.run_id, **run_meta(job, in_progress=False)}
                    )
    return get_job(store, job_id)


def _written_outcomes(table: JobTable, job: JobRecord) -> dict[str, PointUpdate]:
    """The outcome each unfinished point's executor wrote to its directory (none: not there)."""
    updates: dict[str, PointUpdate] = {}
    for p in job.points:
        if p.state.terminal:
            continue
        with contextlib.suppress(OSError, ValueError, KeyError):
            outcome = read_outcome(table.point_dir(job.id, p.point_id))
            if outcome is not None:
                updates[p.point_id] = outcome_update(outcome)
    return updates


def resume_job(
    store: Store,
    job_id: JobId,
    settings: LaunchSettings,
    *,
    token: str | None = None,
    caller: Caller = Caller.WEB,
    poll_s: float | None = None,
) -> bool:
    """Start a worker for a job that has none (after a crash or a reboot). Returns whether it did.

    Raises:
        LaunchRefused: when `authorize` refuses.
        JobNotFound: when there is no such job.
    """
    authorize(settings, token, caller=caller)
    table = JobTable(store)
    job = table.get(job_id)
    if job.state.terminal or table.worker_alive(job_id):
        return False
    return spawn_worker(store, job_id, settings=settings, poll_s=poll_s)


def resume_interrupted(
    store: Store, settings: LaunchSettings, *, caller: Caller = Caller.CLI
) -> list[JobId]:
    """Resume every job whose worker is gone (call at startup); returns the resumed ids."""
    out = []
    for st in list_jobs(store):
        interrupted = st.state in (JobState.INTERRUPTED, JobState.PENDING) and not st.worker_alive
        if interrupted and resume_job(store, st.id, settings, caller=caller):
            out.append(st.id)
    return out


def wait_job(store: Store, job_id: JobId, *, timeout_s: float, poll_s: float = 0.5) -> JobStatus:
    """Poll until the job is final (or interrupted) or `timeout_s` passes; returns its status."""
    deadline = time.monotonic() + timeout_s
    while True:
        st = get_job(store, job_id)
        if st.state.terminal or st.state == JobState.INTERRUPTED or time.monotonic() >= deadline:
            return st
        time.sleep(poll_s)


def log_path(store: Store, job_id: JobId, point_id: str, stream: LogStream = "stdout") -> Path:
    """Path of one log of a point (it may not exist yet)."""
    return JobTable(store).point_dir(job_id, point_id) / LOG_FILES[stream]


def log_tail(
    store: Store,
    job_id: JobId,
    point_id: str,
    stream: LogStream = "stdout",
    *,
    max_bytes: int = 16_384,
) -> str:
    """The last `max_bytes` of a point's log ('' when it has none yet)."""
    path = log_path(store, job_id, point_id, stream)
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read()
    except FileNotFoundError:
        return ""
    text = data.decode("utf-8", "replace")
    if size > max_bytes:
        # Drop the partial first line, unless that would leave nothing.
        rest = text.split("\n", 1)[-1]
        text = rest or text
    return text
