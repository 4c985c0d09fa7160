"""The slurm backend: the same point executor as the local backend, as a Slurm job array.

``sbatch --array`` submits the pending points of a job as one array (one task per point, at
most `array_parallelism` at once); each task runs ``python -m runner.execute --array LIST I``.
Partition, account, QoS, GPUs per node, memory, the time limit and extra sbatch options come from
`plan.slurm`; `preflight` checks them with ``sbatch --test-only`` before a job is recorded.
States come from ``squeue`` (``sacct`` for tasks the controller has forgotten) and from the
point's own files: the executor writes its state and outcome into the point directory, which must
therefore sit on a file system the compute nodes share with the worker (the store usually does).

When Slurm ends a task (time limit, node failure, memory limit, an outside ``scancel``) the
executor gets SIGTERM and writes a "stopped" outcome, or nothing if it was killed outright; the
point's final state then comes from Slurm's state and reason (docs/runner.md lists them).

With ``cluster: local`` the local backend runs the same executor as local processes instead,
`array_parallelism` at once (for trying a plan without a cluster, and for the runner's tests).
"""

from __future__ import annotations

import logging
import shlex
import sys
from pathlib import Path
from typing import Any, ClassVar

from runner import slurmctl
from runner.backends.base import BackendContext, CommandBackend, PointUpdate, outcome_update
from runner.backends.local import LocalBackend
from runner.errors import PlanError
from runner.execute import Outcome, read_outcome
from runner.jobs import JobRecord, PointRecord, PointState, now
from runner.locks import is_held
from runner.options import SlurmOptions
from runner.plan import Plan
from runner.procs import STOP_FLAG
from runner.slurmctl import TaskState

log = logging.getLogger(__name__)

# Slurm states that end a task, and the point state and words each stands for.
_ENDINGS: dict[str, tuple[PointState, str]] = {
    "COMPLETED": (PointState.FAILED, "ended COMPLETED but its executor wrote no outcome"),
    "FAILED": (PointState.FAILED, "failed"),
    "TIMEOUT": (PointState.TIMED_OUT, "hit its time limit"),
    "CANCELLED": (PointState.CANCELLED, "was cancelled in Slurm (scancel)"),
    "NODE_FAIL": (PointState.FAILED, "was killed by a node failure"),
    "OUT_OF_MEMORY": (PointState.FAILED, "ran out of memory"),
    "PREEMPTED": (PointState.FAILED, "was preempted"),
    "BOOT_FAIL": (PointState.FAILED, "could not boot its node"),
    "DEADLINE": (PointState.FAILED, "missed its deadline"),
}
# The slurm fields preflight tries without, to name the one a cluster refuses.
_OPTIONAL = (
    "partition",
    "account",
    "qos",
    "gpus_per_node",
    "cpus_per_task",
    "mem_gb",
    "additional_parameters",
)
_MEMORY_KILL = ("exceeded memory limit", "exceeded job memory limit", "oom-kill", "out of memory")


class _LocalCluster(LocalBackend):
    """``cluster: local``: the local backend, `slurm.array_parallelism` points at once."""

    def max_parallel(self, job: JobRecord) -> int:
        opts = job.plan.slurm
        assert opts is not None, "plan.require() checks this before launch"
        return opts.array_parallelism


class SlurmBackend(CommandBackend):
    """Points as a Slurm job array (sbatch), or as local processes with ``cluster: local``."""

    name = "slurm"
    poll_interval_s: ClassVar[float] = 2.0

    def __init__(self, ctx: BackendContext) -> None:
        super().__init__(ctx)
        self._local = _LocalCluster(ctx)

    def _opts(self, job: JobRecord) -> SlurmOptions:
        opts = job.plan.slurm
        assert opts is not None, "plan.require() checks this before launch"
        return opts

    def close(self) -> None:
        self._local.close()

    # ---- checks before a job is recorded -------------------------------------------------------
    @classmethod
    def preflight(cls, plan: Plan) -> None:
        """Ask the cluster (``sbatch --test-only``) whether it would take the plan's options.

        Raises:
            PlanError: naming the slurm field the cluster refused, with sbatch's message.
            BackendError: when Slurm's tools are missing or do not answer.
        """
        opts = plan.slurm
        if opts is None or opts.cluster == "local":
            return
        array = f"--array=0-{len(plan.points()) - 1}%{opts.array_parallelism}"
        why = slurmctl.check_only([*opts.sbatch_args(), array])
        if why is None:
            return
        # Which field? The one without which the cluster takes the job (sbatch's words often
        # do not say: "Requested node configuration is not available").
        field = None
        for name in _OPTIONAL:
            if getattr(opts, name) in (None, {}):
                continue
            trial = opts.model_copy(update={name: {} if name == "additional_parameters" else None})
            if slurmctl.check_only([*trial.sbatch_args(), array]) is None:
                field = f"slurm.{name}"
                break
        raise PlanError(
            field or _refused_field(opts, why), f"the cluster refuses it: sbatch says {why}"
        )

    # ---- submit --------------------------------------------------------------------------------
    def submit(self, job: JobRecord) -> dict[str, PointUpdate]:
        opts = self._opts(job)
        if opts.cluster == "local":
            return self._local.submit(job)
        pending = [p for p in job.points if p.state == PointState.PENDING]
        if not pending or job.cancel_requested:
            return {}
        updates = self._adopt(job)
        pending = [p for p in pending if p.point_id not in updates]
        if pending:
            updates |= self._submit_array(job, opts, pending)
        return updates

    def _submit_array(
        self, job: JobRecord, opts: SlurmOptions, pending: list[PointRecord]
    ) -> dict[str, PointUpdate]:
        arrays = self._arrays(job)
        n = len(arrays)
        sdir = self._slurm_dir(job)
        sdir.mkdir(parents=True, exist_ok=True)
        specs = []
        for p in pending:
            spec = self.write_spec(job, self.plan_point(job, p.point_id))
            for stale in ("outcome.json", "state.json", STOP_FLAG):
                (spec.parent / stale).unlink(missing_ok=True)
            specs.append(str(spec))
        listing = sdir / f"array-{n}.specs"
        listing.write_text("".join(f"{s}\n" for s in specs))
        script = sdir / f"array-{n}.sh"
        python = opts.python or sys.executable
        script.write_text(
            "#!/bin/sh\n"
            f"# paretolens job {job.id}, array {n}: task i runs line i+1 of {listing.name}\n"
            f"exec {shlex.quote(python)} -m runner.execute --array {shlex.quote(str(listing))} "
            '"$SLURM_ARRAY_TASK_ID"\n'
        )
        name = f"paretolens-{job.id}-{n}"
        # The intent first: a worker killed during sbatch finds the array by its name on restart.
        entry: dict[str, Any] = {"n": n, "name": name, "point_ids": [p.point_id for p in pending]}
        self._save_arrays(job, [*arrays, {**entry, "state": "submitting"}])
        args = [
            *opts.sbatch_args(),
            f"--array=0-{len(pending) - 1}%{opts.array_parallelism}",
            f"--job-name={name}",
            f"--chdir={self.ctx.table.job_dir(job.id)}",
            f"--output={sdir / '%A_%a.out'}",
            f"--error={sdir / '%A_%a.err'}",
        ]
        array_id = slurmctl.submit(args, str(script))
        self._save_arrays(job, [*arrays, {**entry, "state": "submitted", "job_id": array_id}])
        log.info("job %s: sbatch job %s, an array of %d points", job.id, array_id, len(pending))
        self._note(job, f"sbatch job {array_id}: an array of {len(pending)} points ({name})")
        return self._queued(entry["point_ids"], array_id, new_attempt=True)

    def _adopt(self, job: JobRecord) -> dict[str, PointUpdate]:
        """Arrays whose sbatch ran but whose ids were not recorded (the worker died meanwhile)."""
        arrays = self._arrays(job)
        updates: dict[str, PointUpdate] = {}
        changed = False
        for a in arrays:
            if a["state"] != "submitting":
                continue
            found = slurmctl.find_by_name(a["name"])
            a["state"], changed = ("submitted" if found else "lost"), True
            if found:
                a["job_id"] = found
                updates |= self._queued(a["point_ids"], found, new_attempt=True)
        if changed:
            self._save_arrays(job, arrays)
        return updates

    @staticmethod
    def _queued(
        point_ids: list[str], array_id: str, *, new_attempt: bool
    ) -> dict[str, PointUpdate]:
        return {
            pid: PointUpdate(
                PointState.QUEUED,
                submitted_at=now(),
                handle={"slurm_job_id": f"{array_id}_{i}", "slurm_array_id": array_id},
                new_attempt=new_attempt,
            )
            for i, pid in enumerate(point_ids)
        }

    # ---- status --------------------------------------------------------------------------------
    def status(self, job: JobRecord) -> dict[str, PointUpdate]:
        if self._opts(job).cluster == "local":
            return self._local.status(job)
        live = [p for p in job.points if p.state in (PointState.QUEUED, PointState.RUNNING)]
        if not live:
            return {}
        updates: dict[str, PointUpdate] = {}
        try:
            slurm = slurmctl.states(p.handle["slurm_array_id"] for p in live if _array_of(p))
        except slurmctl.SlurmUnavailable as exc:
            # A controller that is restarting is no verdict on the points: ask again next poll.
            log.warning("job %s: %s; asking again", job.id, exc)
            return {}
        for p in live:
            update = self._observe_slurm(job, p, slurm.get(p.handle.get("slurm_job_id", "")))
            if update is not None:
                updates[p.point_id] = update
        return updates

    def _observe_slurm(
        self, job: JobRecord, p: PointRecord, task: TaskState | None
    ) -> PointUpdate | None:
        pdir = self.ctx.table.point_dir(job.id, p.point_id)
        task_id = p.handle.get("slurm_job_id")
        if task_id is None:
            return PointUpdate(
                PointState.FAILED, reason="no slurm job id was recorded for this point"
            )
        outcome = read_outcome(pdir)
        if outcome is not None:
            if outcome.state != PointState.CANCELLED or job.cancel_requested:
                return outcome_update(outcome)
            # The executor was stopped by a signal nobody here sent: Slurm knows why.
            if task is not None and not task.ended:
                return None  # Slurm has not recorded the end yet: ask again next poll
            if task is None:
                return outcome_update(outcome)
            return self._ended(job, p, task, outcome)
        if task is None:
            if is_held(pdir / "executor.lock"):
                return None if p.state == PointState.RUNNING else PointUpdate(PointState.RUNNING)
            return PointUpdate(
                PointState.FAILED,
                reason=f"slurm job {task_id} is unknown to squeue and sacct and left no outcome "
                f"(see {self._log(job, task_id, 'err')})",
                finished_at=now(),
            )
        if task.waiting:
            reason = f"{task.state.lower()} in Slurm" + (f" ({task.reason})" if task.reason else "")
            if p.state == PointState.QUEUED and p.reason == reason:
                return None
            return PointUpdate(PointState.QUEUED, reason=reason)
        if task.active:
            reason = f"{task.state.lower()} in Slurm" + (f" on {task.nodes}" if task.nodes else "")
            if p.state == PointState.RUNNING and p.reason == reason:
                return None
            started = p.started_at if p.state == PointState.RUNNING else now()
            return PointUpdate(PointState.RUNNING, started_at=started, reason=reason)
        # Ended. The outcome may have landed between the two reads.
        outcome = read_outcome(pdir)
        if outcome is not None and (outcome.state != PointState.CANCELLED or job.cancel_requested):
            return outcome_update(outcome)
        return self._ended(job, p, task, outcome)

    def _ended(
        self, job: JobRecord, p: PointRecord, task: TaskState, outcome: Outcome | None
    ) -> PointUpdate:
        """The point's final state from Slurm's, for a task that ended without its own verdict."""
        state, words = _ENDINGS.get(task.state, (PointState.FAILED, "ended"))
        if job.cancel_requested and state != PointState.SUCCEEDED:
            state = PointState.CANCELLED
        err = self._log(job, task.task_id, "err")
        memory = _memory_line(err)
        if memory and task.state != "OUT_OF_MEMORY":
            words = f"{words}: out of memory, Slurm killed it ({memory})"
        reason = f"slurm job {task.task_id} {words} ({task.state}"
        reason += f", reason {task.reason})" if task.reason else ")"
        if outcome is not None and outcome.reason:
            reason += f"; the executor says: {outcome.reason}"
        reason += f"; see {err}"
        return PointUpdate(
            state,
            reason=reason,
            exit_code=outcome.exit_code if outcome is not None else None,
            started_at=outcome.started_at if outcome is not None else None,
            finished_at=outcome.finished_at if outcome is not None else now(),
            result_files=tuple(outcome.result_files) if outcome is not None else (),
        )

    # ---- cancel --------------------------------------------------------------------------------
    def cancel(self, job: JobRecord) -> dict[str, PointUpdate]:
        if self._opts(job).cluster == "local":
            return self._local.cancel(job)
        # scancel first: Slurm sends SIGTERM to every process of a running task (the executor
        # stops its groups and writes a cancelled outcome) and SIGKILL only after KillWait;
        # pending tasks never start. Then the stop flags, for a task that is starting right now.
        self._adopt(job)
        ids = {a["job_id"] for a in self._arrays(job) if a.get("job_id")}
        slurmctl.cancel(ids)
        self._note(job, f"scancel {' '.join(sorted(ids))}")
        self.stop_points(job)
        # A job cancelled while queued never runs; a running one writes a cancelled outcome.
        return {
            p.point_id: PointUpdate(
                PointState.CANCELLED, reason="cancelled while queued", finished_at=now()
            )
            for p in job.points
            if p.state in (PointState.PENDING, PointState.QUEUED)
        }

    def cancel_wait_s(self, job: JobRecord) -> float:
        # Slurm's KillWait (30 s by default) may pass before a running task is gone.
        return super().cancel_wait_s(job) + 30.0

    # ---- helpers -------------------------------------------------------------------------------
    def _slurm_dir(self, job: JobRecord) -> Path:
        return self.ctx.table.job_dir(job.id) / "slurm"

    def _log(self, job: JobRecord, task_id: str, kind: str) -> Path:
        return self._slurm_dir(job) / f"{task_id}.{kind}"

    def _arrays(self, job: JobRecord) -> list[dict[str, Any]]:
        return [dict(a) for a in job.backend_state.get("slurm", {}).get("arrays", [])]

    def _save_arrays(self, job: JobRecord, arrays: list[dict[str, Any]]) -> None:
        def change(r: JobRecord) -> None:
            r.backend_state = {
                **r.backend_state,
                "slurm": {**r.backend_state.get("slurm", {}), "arrays": arrays},
            }

        job.backend_state = self.ctx.table.update(job.id, change).backend_state

    def _note(self, job: JobRecord, note: str) -> None:
        def change(r: JobRecord) -> None:
            r.notes = [*r.notes, note]

        self.ctx.table.update(job.id, change)


def _array_of(p: PointRecord) -> bool:
    return "slurm_array_id" in p.handle


def _memory_line(err: Path) -> str:
    """The line of a task's Slurm log that says it was killed for its memory, if any."""
    try:
        text = err.read_text(errors="replace")[-8192:]
    except OSError:
        return ""
    for line in reversed(text.splitlines()):
        if any(k in line.lower() for k in _MEMORY_KILL):
            return line.strip()[:200]
    return ""


def _refused_field(opts: SlurmOptions, why: str) -> str:
    """The slurm field an sbatch refusal is about (best effort, from sbatch's words)."""
    low = why.lower()
    if "partition" in low:
        return "slurm.partition"
    if "account" in low:
        return "slurm.account"
    if "qos" in low:
        return "slurm.qos"
    if "time limit" in low:
        return "slurm.time_limit_min"
    if opts.gpus_per_node and ("gres" in low or "gpu" in low or "node configuration" in low):
        return "slurm.gpus_per_node"
    if "memory" in low or "mem" in low:
        return "slurm.mem_gb"
    if "cpu" in low:
        return "slurm.cpus_per_task"
    return "slurm.additional_parameters" if opts.additional_parameters else "slurm"
