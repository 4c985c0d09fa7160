"""A server the benchmarks start as a child process: a free loopback port, and the process
started, polled until it answers and stopped again, with the end of its log when it does not
start."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def started(
    cmd: list[str],
    ready: Callable[[], object],
    *,
    what: str,
    timeout: float,
    poll: float,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen[Any]]:
    """Start `cmd` (output to a temporary log), call `ready` every `poll` seconds until it
    returns without an OSError, yield the process, and stop it (terminate, then kill after
    10 s) on the way out.

    Raises:
        RuntimeError: the process stopped, or did not answer within `timeout` seconds; the
            message names `what` and carries the end of its log.
    """
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in the finally below)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                ready()
                break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise RuntimeError(f"{what} did not start: {log.read()[-2000:]!r}")
            time.sleep(poll)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
