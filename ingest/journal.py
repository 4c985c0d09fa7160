"""Atomic commits of several store files: staged files, a journal, roll-forward on restart.

Every file a writer changes under `Store.lock()` is staged: the new content goes to a temporary
file beside its target (`.tmp-*`), is fsynced, and nothing a reader opens changes. When the lock
is released the whole change commits in these steps:

1. the directories holding staged files are fsynced (the temporary files' names are durable);
2. the journal (`.journal.json`: every rename and delete, relative to the store root) is written
   to a temporary file, fsynced, renamed into place and the root fsynced: **the commit point**;
3. each staged file is renamed over its target, deleted targets are unlinked, and each directory
   touched is fsynced;
4. the journal is removed and the root fsynced.

A process killed before the journal's rename leaves the store exactly as it was (the next writer
sweeps the temporary files). Killed after it, the journal names the whole new state: the next
writer (`Store.lock()`) finishes the renames before anything else (`recover`), and readers
meanwhile read every file through the journal (`pending` + `resolve`), so they see the whole new
state as well. An error before the commit point (a full disk, a read-only store) drops the staged
files and raises `StoreWriteError`, saying the store holds what it held.

`STEP_HOOK`, when set, is called after every step above with the step's name (one call per
staged file, per rename, ...): the crash tests kill the process there, at every boundary in turn.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

JOURNAL = ".journal.json"
TEMP_PREFIX = ".tmp-"

# Test hook: called with the name of each write step just completed (see the module docstring).
STEP_HOOK: Callable[[str], None] | None = None


def step(name: str) -> None:
    """Mark a write boundary (a no-op unless a test installed `STEP_HOOK`)."""
    if STEP_HOOK is not None:
        STEP_HOOK(name)


class StoreWriteError(OSError):
    """A store change that could not be written, and what the store holds because of it."""

    def __init__(self, root: Path, cause: OSError, *, committed: bool = False) -> None:
        code = cause.errno or 0
        name = errno.errorcode.get(code, "")
        what = cause.strerror or str(cause) or type(cause).__name__
        where = f" ({cause.filename})" if cause.filename else ""
        if committed:
            state = (
                "the change is committed in the store's journal (.journal.json) but not all "
                "applied; readers already see it whole, and the next write to the store "
                "completes it"
            )
        else:
            state = "nothing of this change was stored: the store holds what it held before"
        if code == errno.ENOSPC or code == errno.EDQUOT:
            hint = "; free space on that file system (or pass --store elsewhere) and run it again"
        elif code in (errno.EROFS, errno.EACCES, errno.EPERM):
            hint = "; the store is read-only here: pass --store with a writable directory"
        else:
            hint = ""
        self.message = (
            f"cannot write to the store at {root}: {what}{f' [{name}]' if name else ''}{where}; "
            f"{state}{hint}"
        )
        self.committed = committed
        super().__init__(code, self.message)

    def __str__(self) -> str:
        return self.message


def fsync_dir(path: Path) -> None:
    """Make a directory's entries (a rename, a new or removed name) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_beside(target: Path) -> Path:
    """A new, empty temporary file in the target's directory (created now, so unique)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=target.suffix, dir=target.parent)
    os.close(fd)
    return Path(tmp)


def fsync_file(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def pending(root: Path) -> dict[str, str | None] | None:
    """The journal of a committed, not yet applied change: target -> staged file (None: the
    target is deleted), both relative to the root; None when there is none."""
    try:
        text = (root / JOURNAL).read_text()
    except FileNotFoundError:
        return None
    doc = json.loads(text)
    return {str(k): (str(v) if v is not None else None) for k, v in doc["files"].items()}


def resolve(root: Path, journal: dict[str, str | None], target: Path) -> Path | None:
    """Where a reader finds `target` while `journal` is pending (None: deleted)."""
    rel = target.relative_to(root).as_posix()
    if rel not in journal:
        return target
    staged = journal[rel]
    if staged is None:
        return None
    path = root / staged
    # Already renamed (the journal is being applied): the target is the new file.
    return path if path.exists() else target


def apply(root: Path, journal: dict[str, str | None], prefix: str = "") -> None:
    """Rename every staged file over its target and unlink deleted targets (idempotent)."""
    dirs: set[Path] = set()
    for rel, staged in journal.items():
        target = root / rel
        if staged is None:
            if target.exists():
                _unlink(target)
                dirs.add(target.parent)
            step(f"{prefix}delete {rel}")
            continue
        src = root / staged
        if src.exists():
            os.replace(src, target)
            dirs.add(target.parent)
        step(f"{prefix}rename {rel}")
    for d in sorted(dirs):
        fsync_dir(d)
    step(f"{prefix}fsync applied directories")
    _unlink(root / JOURNAL)
    fsync_dir(root)
    step(f"{prefix}journal removed")


def recover(root: Path) -> bool:
    """Complete a committed change a killed writer left (call under the store lock).

    Returns:
        Whether there was one.
    """
    journal = pending(root)
    if journal is None:
        return False
    apply(root, journal, prefix="recover: ")
    return True


def sweep(root: Path) -> int:
    """Remove the temporary files dead writers left in the root and its directories (call under
    the lock, after `recover`: only the lock holder stages files)."""
    n = 0
    for base in [root, *(d for d in root.iterdir() if d.is_dir() and d.name != "jobs")]:
        for tmp in base.glob(f"{TEMP_PREFIX}*"):
            if tmp.is_file():
                _unlink(tmp)
                n += 1
    return n


class Transaction:
    """The files one writer has staged under the store lock (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.staged: dict[Path, Path | None] = {}  # target -> staged temp file (None: delete)

    def resolve(self, target: Path) -> Path | None:
        """What this writer reads for `target`: its staged file, None if deleted, else the file."""
        return self.staged.get(target, target)

    def stage(self, target: Path, write: Callable[[Path], None]) -> None:
        """Write the new content of `target` to a temporary file (`write(tmp)`) and fsync it."""
        tmp = temp_beside(target)
        try:
            write(tmp)
            fsync_file(tmp)
        except BaseException:
            _unlink(tmp)
            raise
        old = self.staged.get(target)
        if old is not None:
            _unlink(old)  # staged twice in one change: the earlier version is never read again
        self.staged[target] = tmp
        step(f"staged {target.relative_to(self.root).as_posix()}")

    def delete(self, target: Path) -> None:
        old = self.staged.pop(target, None)
        if old is not None:
            _unlink(old)
        if target.exists():
            self.staged[target] = None

    def abort(self) -> None:
        """Drop every staged file: the store is as before."""
        for tmp in self.staged.values():
            if tmp is not None:
                _unlink(tmp)
        self.staged.clear()

    def commit(self) -> None:
        """Make the staged change the store's state in one step (the journal's rename)."""
        if not self.staged:
            return
        root = self.root
        files = {
            t.relative_to(root).as_posix(): (s.relative_to(root).as_posix() if s else None)
            for t, s in self.staged.items()
        }
        try:
            for d in sorted({t.parent for t, s in self.staged.items() if s is not None}):
                fsync_dir(d)
            step("fsync staged directories")
            tmp = temp_beside(root / JOURNAL)
            try:
                tmp.write_text(json.dumps({"version": 1, "files": files}, indent=1))
                fsync_file(tmp)
                step("journal written")
                os.replace(tmp, root / JOURNAL)
            except BaseException:
                _unlink(tmp)
                raise
        except OSError as exc:
            self.abort()
            raise StoreWriteError(root, exc) from exc
        except BaseException:
            self.abort()
            raise
        try:
            fsync_dir(root)
            step("commit: journal renamed into place")
            apply(root, files)
        except OSError as exc:
            raise StoreWriteError(root, exc, committed=True) from exc
        finally:
            self.staged.clear()
