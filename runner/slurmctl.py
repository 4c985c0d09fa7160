"""Slurm's own commands, as the slurm backend uses them: sbatch, squeue, sacct, scancel.

The runner talks to Slurm through its command-line tools (they read ``SLURM_CONF`` like every
Slurm client), never through a daemon socket or a database of its own:

* ``sbatch --parsable --array=0-N%P`` submits a plan's points as one job array; ``--test-only``
  checks a plan's options against the cluster before anything is recorded;
* ``squeue --array -t all`` reports every task the controller still holds (for ``MinJobAge``
  seconds after it ends), with Slurm's reason; ``sacct`` answers for older tasks when the
  cluster keeps accounting;
* ``scancel`` cancels arrays.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from runner.errors import BackendError

TIMEOUT_S = 60.0

# Slurm job states, as squeue/sacct print them (sacct may append " by <uid>" to CANCELLED).
WAITING = frozenset(
    {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SUSPENDED", "STOPPED"}
)
ACTIVE = frozenset(
    {"RUNNING", "CONFIGURING", "COMPLETING", "RESIZING", "SIGNALING", "STAGE_OUT", "POWER_UP_NODE"}
)


@dataclass(frozen=True)
class TaskState:
    """What Slurm says about one array task: its state and reason (``None`` when it has none)."""

    task_id: str
    state: str
    reason: str = ""
    exit_code: str = ""
    nodes: str = ""

    @property
    def waiting(self) -> bool:
        return self.state in WAITING

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def ended(self) -> bool:
        return not (self.waiting or self.active)


class SlurmUnavailable(BackendError):
    """The controller did not answer (it may be restarting): ask again later."""


def available() -> bool:
    """Whether Slurm's client commands are on PATH."""
    return shutil.which("sbatch") is not None


def run(argv: Sequence[str], *, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run one Slurm command and return its completed process (a missing tool is an error).

    Raises:
        SlurmUnavailable: when the command does not answer in time.
        BackendError: when the command is not installed.
    """
    try:
        return subprocess.run(
            list(argv),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError as exc:
        raise BackendError(
            f"the slurm backend needs Slurm's {argv[0]} on PATH (install the Slurm client, "
            "point SLURM_CONF at the cluster's slurm.conf)"
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise SlurmUnavailable(f"{argv[0]} did not answer within {TIMEOUT_S:g} s") from exc


def sbatch_errors(text: str) -> str:
    """sbatch's error lines, without its ``sbatch: error:`` prefixes, joined."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    out = [ln.replace("sbatch: error: ", "").replace("sbatch: fatal: ", "") for ln in lines]
    return "; ".join(dict.fromkeys(out)) or "no message"


def submit(args: Sequence[str], script: str) -> str:
    """``sbatch --parsable ARGS SCRIPT``; returns the job id (an array's id).

    Raises:
        BackendError: with sbatch's own message when it refuses.
    """
    proc = run(["sbatch", "--parsable", *args, script])
    if proc.returncode != 0:
        raise BackendError(f"sbatch refused the job array: {sbatch_errors(proc.stderr)}")
    job_id = proc.stdout.strip().split(";", 1)[0]
    if not job_id.isdigit():
        raise BackendError(f"sbatch answered {proc.stdout.strip()!r}, not a job id")
    return job_id


def check_only(args: Sequence[str]) -> str | None:
    """``sbatch --test-only ARGS``: None when the cluster would take the job, else why not."""
    proc = run(["sbatch", "--test-only", *args, "--wrap", "true"])
    if proc.returncode == 0:
        return None
    return sbatch_errors(proc.stderr or proc.stdout)


def find_by_name(name: str) -> str | None:
    """The id of the job (array) the controller holds under this name, if any."""
    proc = run(["squeue", "-h", "-t", "all", "--name", name, "-o", "%F"])
    ids = {ln.strip() for ln in proc.stdout.splitlines() if ln.strip().isdigit()}
    return min(ids, key=int) if proc.returncode == 0 and ids else None


def states(array_ids: Iterable[str]) -> dict[str, TaskState]:
    """Slurm's view of every task of these arrays, keyed by ``<array id>_<index>``.

    squeue first (pending tasks come one per line with ``--array``); what it no longer holds is
    asked of sacct, which answers only on clusters with accounting. Tasks neither knows are
    missing from the result.

    Raises:
        SlurmUnavailable: when squeue fails (the controller does not answer).
    """
    wanted = sorted(set(array_ids), key=int)
    out: dict[str, TaskState] = {}
    if not wanted:
        return out
    for aid in wanted:
        # One array at a time: squeue refuses the whole list when one id has been purged.
        proc = run(["squeue", "--array", "-h", "-t", "all", "-j", aid, "-o", "%i|%T|%r|%N"])
        if proc.returncode != 0:
            if "Invalid job id" in proc.stderr:
                continue  # purged from the controller: sacct may know it
            raise SlurmUnavailable(f"squeue failed: {proc.stderr.strip() or proc.returncode}")
        for line in proc.stdout.splitlines():
            parts = line.strip().split("|")
            if len(parts) == 4 and "_" in parts[0]:
                reason = "" if parts[2] in ("None", "(null)") else parts[2]
                out[parts[0]] = TaskState(parts[0], parts[1].split()[0], reason, nodes=parts[3])
    missing = [aid for aid in wanted if not any(k.startswith(f"{aid}_") for k in out)]
    if missing:
        out.update(_sacct(missing))
    return out


def _sacct(array_ids: Sequence[str]) -> dict[str, TaskState]:
    argv = ["sacct", "-X", "-n", "-P", "-o", "JobID,State,Reason,ExitCode,NodeList"]
    for aid in array_ids:
        argv += ["-j", aid]
    proc = run(argv)
    out: dict[str, TaskState] = {}
    if proc.returncode != 0:
        return out  # accounting is disabled on this cluster
    for line in proc.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 5 and "_" in parts[0] and "[" not in parts[0]:
            reason = "" if parts[2] in ("None", "(null)") else parts[2]
            out[parts[0]] = TaskState(parts[0], parts[1].split()[0], reason, parts[3], parts[4])
    return out


def cancel(job_ids: Iterable[str]) -> None:
    """``scancel`` these jobs or tasks (ids Slurm no longer knows are fine).

    Raises:
        BackendError: when scancel fails for another reason.
    """
    ids = sorted(set(job_ids))
    if not ids:
        return
    proc = run(["scancel", *ids])
    if proc.returncode != 0 and "Invalid job id" not in proc.stderr:
        raise BackendError(f"scancel {' '.join(ids)} failed: {proc.stderr.strip()}")
