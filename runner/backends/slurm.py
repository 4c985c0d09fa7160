"""The slurm backend: the same point executor as the local backend, as a submitit job array.

Partition, account, QoS, GPUs per node and the time limit come from `plan.slurm`. With
``cluster: local`` submitit runs the jobs as local processes instead (how the tests run it).
The executor writes its state and outcome into the point directory, which must therefore sit on
a file system the compute nodes share with the worker (the store usually does).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, ClassVar

import submitit
from submitit.local.local import LocalJob

from runner.backends.base import BackendContext, CommandBackend, PointUpdate, outcome_update
from runner.execute import execute, read_outcome
from runner.jobs import JobRecord, PointRecord, PointState, now
from runner.locks import is_held
from runner.procs import STOP_FLAG

_ACTIVE = (
    "PENDING",
    "RUNNING",
    "REQUEUED",
    "CONFIGURING",
    "COMPLETING",
    "SUSPENDED",
    "RESIZING",
    "UNKNOWN",
)


class SlurmBackend(CommandBackend):
    """Points as a Slurm job array through submitit."""

    name = "slurm"
    poll_interval_s: ClassVar[float] = 2.0

    def __init__(self, ctx: BackendContext) -> None:
        super().__init__(ctx)
        self._jobs: dict[str, submitit.Job[Any]] = {}

    def _folder(self, job: JobRecord) -> Path:
        return self.ctx.table.job_dir(job.id) / "submitit" / "%j"

    def _executor(self, job: JobRecord) -> submitit.AutoExecutor:
        opts = job.plan.slurm
        assert opts is not None, "plan.require() checks this before launch"
        executor = submitit.AutoExecutor(folder=self._folder(job), cluster=opts.cluster)
        params: dict[str, Any] = {
            "name": f"paretolens-{job.id}",
            "timeout_min": opts.time_limit_min,
            "gpus_per_node": opts.gpus_per_node,
            "cpus_per_task": opts.cpus_per_task,
            "mem_gb": opts.mem_gb,
            "slurm_partition": opts.partition,
            "slurm_account": opts.account,
            "slurm_qos": opts.qos,
            "slurm_array_parallelism": opts.array_parallelism,
            "slurm_additional_parameters": dict(opts.additional_parameters) or None,
        }
        executor.update_parameters(**{k: v for k, v in params.items() if v is not None})
        return executor

    def submit(self, job: JobRecord) -> dict[str, PointUpdate]:
        pending = [p for p in job.points if p.state == PointState.PENDING]
        if not pending or job.cancel_requested:
            return {}
        specs = []
        for p in pending:
            spec = self.write_spec(job, self.plan_point(job, p.point_id))
            for stale in ("outcome.json", "state.json", STOP_FLAG):
                (spec.parent / stale).unlink(missing_ok=True)
            specs.append(str(spec))
        jobs = self._executor(job).map_array(execute, specs)
        updates = {}
        for p, sjob in zip(pending, jobs, strict=True):
            self._jobs[p.point_id] = sjob
            updates[p.point_id] = PointUpdate(
                PointState.QUEUED,
                submitted_at=now(),
                handle={"slurm_job_id": str(sjob.job_id)},
                new_attempt=True,
            )
        return updates

    def status(self, job: JobRecord) -> dict[str, PointUpdate]:
        updates: dict[str, PointUpdate] = {}
        for p in job.points:
            if p.state not in (PointState.QUEUED, PointState.RUNNING):
                continue
            update = self._observe(job, p)
            if update is not None:
                updates[p.point_id] = update
        return updates

    def _observe(self, job: JobRecord, p: PointRecord) -> PointUpdate | None:
        pdir = self.ctx.table.point_dir(job.id, p.point_id)
        outcome = read_outcome(pdir)
        if outcome is not None:
            return outcome_update(outcome)
        if is_held(pdir / "executor.lock"):
            return None if p.state == PointState.RUNNING else PointUpdate(PointState.RUNNING)
        sjob = self._job(job, p)
        if sjob is None:
            return PointUpdate(
                PointState.FAILED, reason="no slurm job id was recorded for this point"
            )
        state = self._state(job, sjob)
        if state.startswith(_ACTIVE):
            return None
        # The scheduler says the job ended, and the executor left no outcome.
        # Read once more: the outcome may have landed between the two checks.
        outcome = read_outcome(pdir)
        if outcome is not None:
            return outcome_update(outcome)
        reason = (
            f"slurm job {sjob.job_id} ended {state} without an outcome (see {sjob.paths.stderr})"
        )
        if state.startswith("TIMEOUT"):
            return PointUpdate(PointState.TIMED_OUT, reason=reason, finished_at=now())
        if state.startswith("CANCELLED") or job.cancel_requested:
            return PointUpdate(PointState.CANCELLED, reason=reason, finished_at=now())
        return PointUpdate(PointState.FAILED, reason=reason, finished_at=now())

    def _job(self, job: JobRecord, p: PointRecord) -> submitit.Job[Any] | None:
        if p.point_id in self._jobs:
            return self._jobs[p.point_id]
        job_id = p.handle.get("slurm_job_id")
        if job_id is None:
            return None
        opts = job.plan.slurm
        assert opts is not None
        sjob: submitit.Job[Any] = (
            LocalJob(self._folder(job), job_id)
            if opts.cluster == "local"
            else submitit.SlurmJob(self._folder(job), job_id)
        )
        self._jobs[p.point_id] = sjob
        return sjob

    def _state(self, job: JobRecord, sjob: submitit.Job[Any]) -> str:
        state = str(sjob.state).upper()
        opts = job.plan.slurm
        if opts is not None and opts.cluster == "local":
            # A local job rebuilt after a restart has no process handle: its id is the
            # controller's pid, so ask the system whether that still runs.
            if state == "RUNNING":
                return "RUNNING"
            if state.startswith("NO PROCESS"):
                return "RUNNING" if _pid_alive(int(sjob.job_id)) else "FAILED"
            return "COMPLETED" if state == "FINISHED" else state
        return state

    def cancel(self, job: JobRecord) -> dict[str, PointUpdate]:
        # Executors first (SIGTERM: they stop their groups and write a cancelled outcome), then
        # the scheduler, which would kill them without that chance.
        self.stop_points(job)
        for p in job.points:
            if p.state.terminal:
                continue
            sjob = self._job(job, p)
            if sjob is not None:
                with contextlib.suppress(OSError, RuntimeError):
                    sjob.cancel(check=False)
        # A job cancelled while queued never runs; a running one writes a cancelled outcome.
        return {
            p.point_id: PointUpdate(
                PointState.CANCELLED, reason="cancelled while queued", finished_at=now()
            )
            for p in job.points
            if p.state in (PointState.PENDING, PointState.QUEUED)
        }


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
