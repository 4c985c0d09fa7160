"""File locks (fcntl.flock) and atomic writes for the runner's files.

A live process holds a lock file for as long as it lives; the kernel releases the lock when the
process dies, however it dies. So "is the lock free?" answers "is the holder gone?" without
trusting pids, which the system reuses.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


class LockHeld(Exception):
    """Another process holds the lock."""


@contextlib.contextmanager
def hold(path: Path, *, wait: bool = True, patience_s: float = 0.0) -> Iterator[IO[str]]:
    """Hold an exclusive lock on `path` (created if missing).

    With `wait` False the lock is tried for `patience_s` seconds before giving up: `is_held`
    takes a lock for a moment to look at it, so a process starting while another looks would
    otherwise take the look for a live holder.

    Raises:
        LockHeld: when `wait` is False and another process holds it (for `patience_s`).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        deadline = time.monotonic() + patience_s
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                break
            except BlockingIOError as exc:
                if time.monotonic() >= deadline:
                    raise LockHeld(str(path)) from exc
                time.sleep(0.005)
        try:
            yield fh
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


# How long a starting worker keeps trying a lock that `is_held` may be looking at: a look holds
# it for microseconds, a live worker for as long as it lives.
LOOK_PATIENCE_S = 1.0


def is_held(path: Path) -> bool:
    """Whether some process holds the lock on `path` now (it takes the lock for a moment: a
    process taking it at that moment must allow `LOOK_PATIENCE_S`)."""
    if not path.exists():
        return False
    try:
        with hold(path, wait=False):
            return False
    except LockHeld:
        return True


def write_atomic(path: Path, text: str) -> None:
    """Write a text file so readers see the old or the new content, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json(path: Path, doc: Any) -> None:
    """Atomically write a JSON document."""
    write_atomic(path, json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n")


def read_json(path: Path) -> Any:
    """Read a JSON document, or None when the file does not exist."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
