"""The local backend: runs each point's commands on this machine, `commands.max_parallel` at once.

Each point runs in a detached executor process (``python -m runner.execute``, its own session), so
a worker that dies does not take running points with it: the restarted worker finds their
executors alive through their lock files and keeps tracking them.
"""

from __future__ import annotations

import contextlib
import subprocess
from typing import ClassVar

from runner.backends.base import BackendContext, CommandBackend, PointUpdate, detached
from runner.jobs import JobRecord, PointState, now
from runner.procs import STOP_FLAG


class LocalBackend(CommandBackend):
    """Points as local processes."""

    name = "local"
    poll_interval_s: ClassVar[float] = 0.5

    def __init__(self, ctx: BackendContext) -> None:
        super().__init__(ctx)
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        # Executors whose point is over but whose process has not exited yet (reaped later).
        self._exiting: list[subprocess.Popen[bytes]] = []

    def submit(self, job: JobRecord) -> dict[str, PointUpdate]:
        updates = {
            p.point_id: PointUpdate(PointState.QUEUED, submitted_at=now())
            for p in job.points
            if p.state == PointState.PENDING
        }
        return updates | self._start(job, updates)

    def status(self, job: JobRecord) -> dict[str, PointUpdate]:
        self._exiting = [proc for proc in self._exiting if proc.poll() is None]
        updates: dict[str, PointUpdate] = {}
        for p in job.points:
            if p.state != PointState.RUNNING:
                continue
            proc = self._procs.get(p.point_id)
            starting = proc is not None and proc.poll() is None
            update = self.observe(job, p, executor_may_start=starting)
            if update is not None:
                updates[p.point_id] = update
                if (update.state.terminal or update.state == PointState.PENDING) and proc:
                    self._exiting.append(self._procs.pop(p.point_id))
        for pid, u in list(updates.items()):
            if u.state == PointState.PENDING:
                updates[pid] = PointUpdate(PointState.QUEUED, reason=u.reason)
        return updates | self._start(job, updates)

    def close(self) -> None:
        # Every point is over: the executors have written their outcomes and are exiting.
        for proc in [*self._procs.values(), *self._exiting]:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=30)
        self._procs.clear()
        self._exiting.clear()

    def cancel(self, job: JobRecord) -> dict[str, PointUpdate]:
        self.stop_points(job)
        self._exiting += self._procs.values()
        self._procs.clear()
        never_started = (PointState.PENDING, PointState.QUEUED)
        return {
            p.point_id: PointUpdate(
                PointState.CANCELLED, reason="cancelled before it started", finished_at=now()
            )
            for p in job.points
            if p.state in never_started
        }

    def max_parallel(self, job: JobRecord) -> int:
        """How many points of the job run at once."""
        assert job.plan.commands is not None
        return job.plan.commands.max_parallel

    def _start(self, job: JobRecord, pending: dict[str, PointUpdate]) -> dict[str, PointUpdate]:
        """Start queued points (plan order) while fewer than `max_parallel` run."""
        limit = self.max_parallel(job)
        states = {
            p.point_id: pending[p.point_id].state if p.point_id in pending else p.state
            for p in job.points
        }
        running = sum(1 for s in states.values() if s == PointState.RUNNING)
        started: dict[str, PointUpdate] = {}
        for p in job.points:
            if running >= limit or job.cancel_requested:
                break
            if states[p.point_id] != PointState.QUEUED:
                continue
            spec = self.write_spec(job, self.plan_point(job, p.point_id))
            pdir = spec.parent
            for stale in ("outcome.json", "state.json", STOP_FLAG):
                (pdir / stale).unlink(missing_ok=True)
            proc = detached(
                ["-m", "runner.execute", str(spec)], log=pdir / "executor.log", cwd=pdir
            )
            self._procs[p.point_id] = proc
            queued = pending.get(p.point_id)
            started[p.point_id] = PointUpdate(
                PointState.RUNNING,
                submitted_at=queued.submitted_at if queued else None,
                started_at=now(),
                handle={"executor_pid": str(proc.pid)},
                new_attempt=True,
                reason=pending[p.point_id].reason if p.point_id in pending else "",
            )
            running += 1
        return started
