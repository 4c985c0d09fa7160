"""Process groups: start a command in its own group, and stop a whole group (children included).

Every command a point runs gets its own process group, so a timeout or a cancel reaches the
command's children too (a shell script's server, a benchmark's workers). A process that puts
itself into a new session (setsid, daemonising) escapes its group; docs/runner.md says so.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from runner.locks import is_held, read_json

# Env vars of the parent that must not leak into benchmark processes.
SECRET_ENV = ("PARETOLENS_TOKEN", "PARETOLENS_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")

# A file in the point directory that tells its executor not to start (or go on with) anything.
STOP_FLAG = "stop"


def spawn(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], stdout: Path, stderr: Path
) -> subprocess.Popen[bytes]:
    """Start `argv` (no shell) in a new process group, appending to the two log files.

    Raises:
        OSError: when the program cannot be started (not found, not executable).
    """
    with open(stdout, "ab") as out, open(stderr, "ab") as err:
        return subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            process_group=0,
        )


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still exists."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_group(pgid: int, grace_s: float, *, leader: subprocess.Popen[bytes] | None = None) -> None:
    """SIGTERM the group, wait up to `grace_s` for it to go, then SIGKILL what is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if leader is not None:
            leader.poll()  # reap the leader so a zombie does not look alive
        if not group_alive(pgid):
            break
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    if leader is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            leader.wait(timeout=5)


def stop_point(point_dir: Path, grace_s: float, *, host: str) -> bool:
    """Stop whatever a point's executor started on this host: the executor, then its groups.

    Returns whether anything was signalled. Points whose outcome is written are left alone.
    The stop flag is written first: an executor that has not started yet (or runs on another
    host) reads it before it starts a command, and the executor writes its state before it
    reads the flag, so either it sees the flag or this call sees its state and signals it.
    """
    if point_dir.is_dir() and not (point_dir / "outcome.json").exists():
        (point_dir / STOP_FLAG).touch()
    state = read_json(point_dir / "state.json")
    if (
        not isinstance(state, dict)
        or state.get("host") != host
        or (point_dir / "outcome.json").exists()
    ):
        return False
    signalled = False
    pid = state.get("pid")
    if isinstance(pid, int) and is_held(point_dir / "executor.lock"):
        # The executor cleans up its own groups and writes a cancelled outcome on SIGTERM.
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
            signalled = True
        deadline = time.monotonic() + grace_s + 2.0
        while time.monotonic() < deadline and is_held(point_dir / "executor.lock"):
            time.sleep(0.05)
        if is_held(point_dir / "executor.lock"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    for pgid in state.get("pgids", []):
        if isinstance(pgid, int) and group_alive(pgid):
            kill_group(pgid, grace_s)
            signalled = True
    return signalled
