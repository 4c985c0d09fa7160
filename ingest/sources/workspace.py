"""The temporary space of one ingest (zips are extracted there), and the sweep of what killed
ingests left behind.

`tempfile.TemporaryDirectory` removes its directory when the ingest ends, but not when the
process is killed: a kill during the extraction of a large zip left gigabytes in the temporary
directory forever. Each ingest now holds an exclusive lock on `<dir>.lock` beside its directory
for as long as it lives (the kernel drops the lock when the process dies, however it dies), and
every ingest starts by removing the directories whose lock nobody holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

PREFIX = "paretolens-ingest-"
# A lock file younger than this may belong to an ingest between creating it and locking it.
_GRACE_S = 2.0
# Directories of ingests from before the locks (no lock file) are swept once this old.
_UNLOCKED_AGE_S = 24 * 3600.0


def sweep(parent: Path) -> list[Path]:
    """Remove the workspaces under `parent` whose ingest is gone; returns what was removed."""
    removed: list[Path] = []
    now = time.time()
    with contextlib.suppress(OSError):
        for lock in sorted(parent.glob(f"{PREFIX}*.lock")):
            try:
                if now - lock.stat().st_mtime < _GRACE_S:
                    continue
                fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live ingest's
                work = lock.with_suffix("")
                shutil.rmtree(work, ignore_errors=True)
                lock.unlink(missing_ok=True)
                removed.append(work)
            finally:
                os.close(fd)
        for work in sorted(parent.glob(f"{PREFIX}*")):
            try:
                old = now - work.stat().st_mtime > _UNLOCKED_AGE_S
            except OSError:
                continue
            if work.is_dir() and not work.with_name(work.name + ".lock").exists() and old:
                shutil.rmtree(work, ignore_errors=True)
                removed.append(work)
    return removed


@contextlib.contextmanager
def workspace(parent: Path | None = None) -> Iterator[Path]:
    """An empty directory for one ingest (under the system's temporary directory), removed when
    the ingest ends, and by the next ingest if this one is killed."""
    base = Path(parent if parent is not None else tempfile.gettempdir())
    sweep(base)
    fd, lock_name = tempfile.mkstemp(prefix=PREFIX, suffix=".lock", dir=base)
    lock = Path(lock_name)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        work = lock.with_suffix("")
        work.mkdir()
        try:
            yield work
        finally:
            shutil.rmtree(work, ignore_errors=True)
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)
