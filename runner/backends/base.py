"""The backend interface: submit, status, cancel, collect.

A backend never writes the job record itself: it returns `PointUpdate`s and the worker applies
them, so one process owns the record's point states. Every method may be called by a worker that
restarted after a crash, so each one works from the record and the files on disk, not from memory
alone.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from runner.environment import point_columns, point_env, point_values
from runner.execute import Outcome, PointSpec, read_outcome, results_dir
from runner.jobs import JobRecord, JobTable, PointRecord, PointState
from runner.locks import is_held, write_json
from runner.plan import BackendName, Plan, Point
from runner.procs import SECRET_ENV, stop_point

if TYPE_CHECKING:
    from ingest.report import IngestReport
    from ingest.store import Store


@dataclass(frozen=True)
class PointUpdate:
    """A change of one point's state, as a backend observed it."""

    state: PointState
    reason: str = ""
    exit_code: int | None = None
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result_files: tuple[str, ...] = ()
    handle: Mapping[str, str] = field(default_factory=dict)
    new_attempt: bool = False


@dataclass(frozen=True)
class Collected:
    """What a finished point left to ingest (or what the backend ingested itself)."""

    run_id: str
    paths: tuple[Path, ...] = ()
    report: IngestReport | None = None
    note: str = ""


@dataclass(frozen=True)
class BackendContext:
    """What a backend may use: the store, the job table and secrets (never written to disk)."""

    store: Store
    table: JobTable
    github_token: str | None = None
    host: str = field(default_factory=socket.gethostname)


class Backend(ABC):
    """Runs a job's points somewhere and reports their states."""

    name: ClassVar[BackendName]
    poll_interval_s: ClassVar[float] = 1.0

    def __init__(self, ctx: BackendContext) -> None:
        self.ctx = ctx

    def interval(self, job: JobRecord) -> float:
        """Seconds between two status polls of this job."""
        return self.poll_interval_s

    @classmethod
    def preflight(cls, plan: Plan) -> None:
        """Check what only the backend's system can check, before a job is recorded.

        Raises:
            PlanError: naming the plan field the system refuses.
            BackendError: when the system cannot be asked.
        """
        del plan  # most backends have nothing to ask

    @abstractmethod
    def submit(self, job: JobRecord) -> dict[str, PointUpdate]:
        """Start or queue every pending point; idempotent (a restarted worker calls it again)."""

    @abstractmethod
    def status(self, job: JobRecord) -> dict[str, PointUpdate]:
        """Poll the points that are not terminal; return the ones whose state changed."""

    @abstractmethod
    def cancel(self, job: JobRecord) -> dict[str, PointUpdate]:
        """Stop everything the job started; return the points that are final at once.

        Safe from any process, and after a restart. Points it does not return end when a later
        `status` reports them (a killed executor writes a cancelled outcome).
        """

    def cancel_wait_s(self, job: JobRecord) -> float:
        """How long after a cancel to wait for final states before calling the rest cancelled."""
        return (job.plan.commands.grace_s if job.plan.commands is not None else 10.0) + 10.0

    def ingest_states(self) -> frozenset[PointState]:
        """Final states whose results are ingested (a timed-out or cancelled point's are partial)."""
        return frozenset({PointState.SUCCEEDED, PointState.FAILED})

    def close(self) -> None:  # noqa: B027 - a hook: most backends hold nothing
        """Release what this backend object holds (called when its worker is done)."""

    def collect(self, job: JobRecord, point: PointRecord) -> Collected:
        """The result files of a finished point, to ingest into the job's run."""
        results = results_dir(self.ctx.table.point_dir(job.id, point.point_id))
        if not point.result_files or not results.is_dir():
            return Collected(job.run_id)
        return Collected(job.run_id, paths=(results,))


def outcome_update(outcome: Outcome) -> PointUpdate:
    """The update that an executor's outcome stands for."""
    return PointUpdate(
        state=outcome.state,
        reason="; ".join([outcome.reason, *outcome.notes]).strip("; "),
        exit_code=outcome.exit_code,
        started_at=outcome.started_at,
        finished_at=outcome.finished_at,
        result_files=tuple(outcome.result_files),
    )


class CommandBackend(Backend, ABC):
    """A backend that runs the plan's commands through `runner.execute` (local, slurm)."""

    MAX_ATTEMPTS: ClassVar[int] = 2

    def write_spec(self, job: JobRecord, point: Point) -> Path:
        """Write the executor spec of a point and return its path."""
        commands = job.plan.commands
        assert commands is not None, "plan.require() checks this before launch"
        pdir = self.ctx.table.point_dir(job.id, point.id)
        pdir.mkdir(parents=True, exist_ok=True)
        values = point_values(job.plan, point, job_id=job.id, result_dir=str(results_dir(pdir)))
        workdir = commands.workdir
        spec = PointSpec(
            job_id=job.id,
            point_id=point.id,
            label=point.label,
            point_dir=str(pdir),
            serve=commands.serve,
            benchmark=commands.benchmark,
            script=commands.script,
            values=values,
            env=point_env(job.plan, point, values),
            port=commands.port,
            health_url=commands.health_url,
            metrics_url=commands.metrics_url,
            ready_timeout_s=commands.ready_timeout_s,
            health_interval_s=commands.health_interval_s,
            timeout_s=job.plan.timeout_s,
            grace_s=commands.grace_s,
            workdir=str(Path(workdir).expanduser().resolve()) if workdir else None,
            result_glob=commands.result_glob,
        )
        path = pdir / "spec.json"
        write_json(path, spec.model_dump(mode="json"))
        write_json(
            pdir / "paretolens_point.json",
            {"paretolens_point": point_columns(point, run_id=job.run_id)},
        )
        return path

    def plan_point(self, job: JobRecord, point_id: str) -> Point:
        """The plan's point with this id."""
        return next(p for p in job.plan.points() if p.id == point_id)

    def observe(
        self, job: JobRecord, point: PointRecord, *, executor_may_start: bool
    ) -> PointUpdate | None:
        """What the point's files say: an outcome, a live executor, or an executor that died.

        `executor_may_start` is true while the executor might not have taken its lock yet.
        """
        pdir = self.ctx.table.point_dir(job.id, point.point_id)
        outcome = read_outcome(pdir)
        if outcome is not None:
            return outcome_update(outcome)
        if is_held(pdir / "executor.lock"):
            return None if point.state == PointState.RUNNING else PointUpdate(PointState.RUNNING)
        if executor_may_start:
            return None
        # The executor is gone and wrote no outcome: stop what it left behind, then retry once.
        stop_point(pdir, grace_s=self._grace(job), host=self.ctx.host)
        if point.attempt < self.MAX_ATTEMPTS:
            return PointUpdate(
                PointState.PENDING,
                reason=f"executor of attempt {point.attempt} died without an outcome; retrying",
            )
        return PointUpdate(
            PointState.FAILED,
            reason=f"executor died without an outcome after {point.attempt} attempts (see {pdir / 'executor.log'})",
        )

    def stop_points(self, job: JobRecord) -> None:
        """Stop the executors (and their process groups) of every unfinished point on this host."""
        for p in job.points:
            if not p.state.terminal:
                stop_point(
                    self.ctx.table.point_dir(job.id, p.point_id),
                    grace_s=self._grace(job),
                    host=self.ctx.host,
                )

    @staticmethod
    def _grace(job: JobRecord) -> float:
        return job.plan.commands.grace_s if job.plan.commands is not None else 10.0


def detached(
    argv: list[str], *, log: Path, cwd: Path, extra_env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start a Python helper in its own session (it outlives this process), logging to `log`.

    Secrets of this process's environment are not passed on; `extra_env` is (e.g. the GitHub
    token a github worker needs).
    """
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
    env.update(extra_env or {})
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
