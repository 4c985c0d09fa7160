"""The slurm backend's ``cluster: local`` mode: submitit's local executor runs the same point
executor as local processes (for trying a plan without a cluster, and for the runner's own
tests)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import submitit
from submitit.local.local import LocalJob

from runner.backends.base import BackendContext, CommandBackend, PointUpdate, outcome_update
from runner.execute import execute, read_outcome
from runner.jobs import JobRecord, PointRecord, PointState, now
from runner.locks import is_held
from runner.options import SlurmOptions
from runner.procs import STOP_FLAG

# submitit's states of a local job that is not over yet.
_LOCAL_ACTIVE = ("PENDING", "RUNNING", "UNKNOWN")


class SubmititLocal(CommandBackend):
    """What the slurm backend does with ``cluster: local``: one submitit local job per point."""

    def __init__(self, ctx: BackendContext) -> None:
        super().__init__(ctx)
        self._jobs: dict[str, submitit.Job[Any]] = {}

    def _opts(self, job: JobRecord) -> SlurmOptions:
        opts = job.plan.slurm
        assert opts is not None, "plan.require() checks this before launch"
        return opts

    def _cancel_local(self, job: JobRecord) -> None:
        # Executors first (SIGTERM: they stop their groups and write a cancelled outcome),
        # then submitit, which would kill them without that chance.
        self.stop_points(job)
        for p in job.points:
            if p.state.terminal:
                continue
            sjob = self._local_job(job, p)
            if sjob is not None:
                with contextlib.suppress(OSError, RuntimeError):
                    sjob.cancel(check=False)

    def _folder(self, job: JobRecord) -> Path:
        return self.ctx.table.job_dir(job.id) / "submitit" / "%j"

    def _executor(self, job: JobRecord) -> submitit.AutoExecutor:
        opts = self._opts(job)
        executor = submitit.AutoExecutor(folder=self._folder(job), cluster=opts.cluster)
        params: dict[str, Any] = {
            "name": f"paretolens-{job.id}",
            "timeout_min": opts.time_limit_min,
            "gpus_per_node": opts.gpus_per_node,
            "cpus_per_task": opts.cpus_per_task,
            "mem_gb": opts.mem_gb,
            "slurm_array_parallelism": opts.array_parallelism,
        }
        executor.update_parameters(**{k: v for k, v in params.items() if v is not None})
        return executor

    def _submit_local(self, job: JobRecord, pending: list[PointRecord]) -> dict[str, PointUpdate]:
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

    def _observe_local(self, job: JobRecord, p: PointRecord) -> PointUpdate | None:
        pdir = self.ctx.table.point_dir(job.id, p.point_id)
        outcome = read_outcome(pdir)
        if outcome is not None:
            return outcome_update(outcome)
        if is_held(pdir / "executor.lock"):
            return None if p.state == PointState.RUNNING else PointUpdate(PointState.RUNNING)
        sjob = self._local_job(job, p)
        if sjob is None:
            return PointUpdate(
                PointState.FAILED, reason="no slurm job id was recorded for this point"
            )
        state = _local_state(sjob)
        if state.startswith(_LOCAL_ACTIVE):
            return None
        # The job ended and the executor left no outcome. Read once more: the outcome may have
        # landed between the two checks.
        outcome = read_outcome(pdir)
        if outcome is not None:
            return outcome_update(outcome)
        reason = (
            f"slurm job {sjob.job_id} ended {state} without an outcome (see {sjob.paths.stderr})"
        )
        if state.startswith("CANCELLED") or job.cancel_requested:
            return PointUpdate(PointState.CANCELLED, reason=reason, finished_at=now())
        return PointUpdate(PointState.FAILED, reason=reason, finished_at=now())

    def _local_job(self, job: JobRecord, p: PointRecord) -> submitit.Job[Any] | None:
        if p.point_id in self._jobs:
            return self._jobs[p.point_id]
        job_id = p.handle.get("slurm_job_id")
        if job_id is None or self._opts(job).cluster != "local":
            return None
        sjob: submitit.Job[Any] = LocalJob(self._folder(job), job_id)
        self._jobs[p.point_id] = sjob
        return sjob


def _local_state(sjob: submitit.Job[Any]) -> str:
    state = str(sjob.state).upper()
    # A local job rebuilt after a restart has no process handle: its id is the controller's
    # pid, so ask the system whether that still runs.
    if state == "RUNNING":
        return "RUNNING"
    if state.startswith("NO PROCESS"):
        return "RUNNING" if _pid_alive(int(sjob.job_id)) else "FAILED"
    return "COMPLETED" if state == "FINISHED" else state


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
