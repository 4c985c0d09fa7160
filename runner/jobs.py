"""The durable job table: one directory per job under ``<store>/jobs``.

Layout::

    jobs/<job-id>/job.json          the record: plan, backend, per-point state, times, log paths
    jobs/<job-id>/.record.lock      serialises read-modify-write of job.json (worker, cancel)
    jobs/<job-id>/worker.lock       held by the live worker for as long as it lives
    jobs/<job-id>/worker.log        the worker's own log
    jobs/<job-id>/points/<point>/   spec.json, state.json, outcome.json, stdout.log, stderr.log,
                                    serve.stdout.log, serve.stderr.log, results/ (what is ingested)

Records are written whole to a temporary file and renamed over job.json, so readers never see a
partial record. A job whose state says running but whose worker lock is free was interrupted
(the worker died); `runner.service.resume_job` starts a new worker that picks it up.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from runner.errors import JobBusy, JobNotFound
from runner.locks import LOOK_PATIENCE_S, LockHeld, hold, is_held, read_json, write_json
from runner.plan import BackendName, Plan

if TYPE_CHECKING:
    # Only the type: the point executor imports this module and must start fast (no polars).
    from ingest.store import Store

log = logging.getLogger(__name__)

JOB_ID = re.compile(r"^j-\d{8}-\d{6}-[0-9a-f]{6}$")


class PointState(StrEnum):
    """Where a point is. The last four are terminal."""

    PENDING = "pending"
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in _TERMINAL


_TERMINAL = frozenset(
    {PointState.SUCCEEDED, PointState.FAILED, PointState.TIMED_OUT, PointState.CANCELLED}
)


class JobState(StrEnum):
    """Where a job is. `interrupted` is derived on read: running, but no live worker."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"

    @property
    def terminal(self) -> bool:
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


def now() -> datetime:
    """The current time, UTC."""
    return datetime.now(UTC)


class PointRecord(BaseModel):
    """One point of a job: its state, times, exit, logs, results and what was ingested."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    point_id: str
    index: int
    arm_index: int
    label: str
    conc: int
    state: PointState = PointState.PENDING
    attempt: int = 0
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    exit_code: int | None = None
    reason: str = ""
    dir: str
    result_files: list[str] = []
    ingested: bool = False
    rows_accepted: int = 0  # the point's rows in the store after its ingest
    rows_duplicate: int = 0  # of those, rows already stored (an interrupted earlier ingest)
    rows_rejected: int = 0
    handle: dict[str, str] = {}

    def elapsed_s(self, at: datetime | None = None) -> float | None:
        """Seconds from start to finish (to `at`, default now, while it runs)."""
        if self.started_at is None:
            return None
        end = self.finished_at or at or now()
        return max(0.0, (end - self.started_at).total_seconds())


class JobRecord(BaseModel):
    """A launched plan: backend, run ids, per-point records and the worker that drives it."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str
    backend: BackendName
    state: JobState = JobState.PENDING
    plan: Plan
    run_id: str
    run_ids: list[str] = []
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    cancel_requested: bool = False
    worker: dict[str, Any] = {}
    backend_state: dict[str, Any] = {}
    error: str = ""
    notes: list[str] = []
    points: list[PointRecord]

    def point(self, point_id: str) -> PointRecord:
        """The record of one point.

        Raises:
            KeyError: when the job has no such point.
        """
        for p in self.points:
            if p.point_id == point_id:
                return p
        raise KeyError(f"job {self.id} has no point {point_id!r}")

    def counts(self) -> dict[PointState, int]:
        """Number of points in each state (every state present, zeros included)."""
        out = dict.fromkeys(PointState, 0)
        for p in self.points:
            out[p.state] += 1
        return out

    @property
    def done(self) -> int:
        return sum(1 for p in self.points if p.state.terminal)

    def final_state(self) -> JobState:
        """The state the job ends in once every point is terminal: succeeded when every point
        did, even if a cancel came after the last one finished (it cancelled nothing)."""
        states = {p.state for p in self.points}
        if states == {PointState.SUCCEEDED} and not self.error:
            return JobState.SUCCEEDED
        if self.cancel_requested or PointState.CANCELLED in states:
            return JobState.CANCELLED
        if self.error or states - {PointState.SUCCEEDED}:
            return JobState.FAILED
        return JobState.SUCCEEDED


class JobTable:
    """The jobs of one store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.root = store.root / "jobs"

    # ---- paths ---------------------------------------------------------------------------------
    def job_dir(self, job_id: str) -> Path:
        """Directory of a job.

        Raises:
            JobNotFound: when the id is not a job id (this also keeps paths inside the store).
        """
        if not JOB_ID.match(job_id):
            raise JobNotFound(job_id)
        return self.root / job_id

    def point_dir(self, job_id: str, point_id: str) -> Path:
        """Directory of one point of a job (logs, spec, outcome, results)."""
        if not re.fullmatch(r"pt-[0-9a-f]{12}", point_id):
            raise KeyError(f"not a point id: {point_id!r}")
        return self.job_dir(job_id) / "points" / point_id

    def _record_path(self, job_id: str) -> Path:
        return self.job_dir(job_id) / "job.json"

    # ---- create / read -------------------------------------------------------------------------
    def create(
        self, plan: Plan, backend: BackendName, *, backend_state: dict[str, Any] | None = None
    ) -> JobRecord:
        """Record a new job for `plan` on `backend`; every point starts pending."""
        stamp = now()
        job_id = f"j-{stamp:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
        points = [
            PointRecord(
                point_id=p.id,
                index=p.index,
                arm_index=p.arm_index,
                label=p.label,
                conc=p.conc,
                dir=f"points/{p.id}",
            )
            for p in plan.points()
        ]
        run_id = plan.run_id or job_id
        record = JobRecord(
            id=job_id,
            backend=backend,
            plan=plan,
            run_id=run_id,
            run_ids=[] if backend == "github" else [run_id],
            created_at=stamp,
            updated_at=stamp,
            backend_state=backend_state or {},
            points=points,
        )
        self.job_dir(job_id).mkdir(parents=True, exist_ok=False)
        self._write(record)
        return record

    def get(self, job_id: str) -> JobRecord:
        """Read one job record.

        Raises:
            JobNotFound: when there is no such job.
        """
        doc = read_json(self._record_path(job_id))
        if doc is None:
            raise JobNotFound(job_id)
        return JobRecord.model_validate(doc)

    def list(self) -> list[JobRecord]:
        """Every job of the store, newest first (unreadable records are logged and skipped)."""
        if not self.root.exists():
            return []
        out = []
        for d in sorted(self.root.iterdir(), reverse=True):
            if not JOB_ID.match(d.name):
                continue
            try:
                out.append(self.get(d.name))
            except (JobNotFound, ValidationError, ValueError) as exc:
                log.warning("skipping unreadable job record %s: %s", d / "job.json", exc)
        return out

    # ---- write ---------------------------------------------------------------------------------
    def update(self, job_id: str, change: Callable[[JobRecord], None]) -> JobRecord:
        """Read, change and write a record under the job's record lock; returns the new record."""
        with hold(self.job_dir(job_id) / ".record.lock"):
            record = self.get(job_id)
            change(record)
            record.updated_at = now()
            self._write(record)
            return record

    def _write(self, record: JobRecord) -> None:
        write_json(self._record_path(record.id), record.model_dump(mode="json"))

    # ---- the worker ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def worker_lock(self, job_id: str) -> Iterator[None]:
        """Hold the job's worker lock and record this process as its worker.

        Raises:
            JobBusy: when a live worker already holds it.
        """
        self.get(job_id)
        with contextlib.ExitStack() as stack:
            try:
                lock = self.job_dir(job_id) / "worker.lock"
                stack.enter_context(hold(lock, wait=False, patience_s=LOOK_PATIENCE_S))
            except LockHeld as exc:
                raise JobBusy(job_id) from exc

            def mark(r: JobRecord) -> None:
                r.worker = {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "started_at": now().isoformat(),
                }

            self.update(job_id, mark)
            yield

    def worker_alive(self, job_id: str) -> bool:
        """Whether a live process drives the job now."""
        return is_held(self.job_dir(job_id) / "worker.lock")
