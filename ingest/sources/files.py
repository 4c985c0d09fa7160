"""Reading the files of an input: one regular file at a time, within the size limit.

Only regular files are read (symlinks are not followed; FIFOs, devices and sockets are refused by
name), at most MAX_FILE_BYTES of each; file names that are not UTF-8 are reported, not read.
`ingest.sources.artifacts` groups what is read into units.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ingest.readers.base import SourceFile

MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass
class FileProblem:
    """A file that could not even be read (oversize, unsafe archive, unreadable)."""

    rel: str
    reason: str
    field: str = ""


def special_kind(mode: int) -> str | None:
    """What a file that is not a regular file is ('FIFO (named pipe)', ...), None for a regular one."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def special_file_reason(kind: str) -> str:
    """The reject reason of a special file."""
    return f"{kind}, not a regular file: refused (a result file must be a regular file)"


def read_file(
    path: Path, rel: str, artifact: str, problems: list[FileProblem]
) -> tuple[SourceFile, float] | None:
    """The file and its mtime, or None with the problem recorded.

    Only regular files are read, and at most MAX_FILE_BYTES of them whatever size they report
    (a device or a growing file reports less than it yields): FIFOs, devices and sockets are
    refused by name without being read (O_NONBLOCK: opening a FIFO does not wait for a writer).
    """
    try:
        # O_NOFOLLOW: a symlink fails to open (ELOOP) instead of being followed, and the open
        # file's own fstat gives its size and mtime (one syscall fewer than lstat + open).
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno == errno.ELOOP and os.path.islink(path):
                problems.append(
                    FileProblem(
                        rel, "symbolic link: not followed (a result file must be a regular file)"
                    )
                )
                return None
            if exc.errno == errno.ENXIO:  # a socket, or a FIFO nobody writes to
                with contextlib.suppress(OSError):
                    kind = special_kind(os.lstat(path).st_mode)
                    if kind is not None:
                        problems.append(FileProblem(rel, special_file_reason(kind)))
                        return None
            raise
        try:
            st = os.fstat(fd)
            kind = special_kind(st.st_mode)
            if kind is not None:
                problems.append(FileProblem(rel, special_file_reason(kind)))
                return None
            size = st.st_size
            if size > MAX_FILE_BYTES:
                problems.append(
                    FileProblem(rel, f"file is {size} bytes, over the {MAX_FILE_BYTES} byte limit")
                )
                return None
            # Read up to one byte past the limit, never more, whatever the size said.
            chunks = [os.read(fd, min(size, MAX_FILE_BYTES) + 1)]
            got = len(chunks[0])
            while chunks[-1] and got <= MAX_FILE_BYTES:
                chunks.append(os.read(fd, min(1 << 20, MAX_FILE_BYTES + 1 - got)))
                got += len(chunks[-1])
        finally:
            os.close(fd)
        if got > MAX_FILE_BYTES:
            problems.append(
                FileProblem(
                    rel, f"file grew past the {MAX_FILE_BYTES} byte limit while it was read"
                )
            )
            return None
        data = chunks[0] if len(chunks) <= 2 and not chunks[-1] else b"".join(chunks)
        return SourceFile(path=path, rel=rel, artifact=artifact, data=data), st.st_mtime
    except OSError as exc:
        problems.append(FileProblem(rel, f"cannot read file: {exc.strerror or exc}"))
        return None


def shown(name: str) -> str:
    """A file name as valid text: bytes that are not UTF-8 appear as `\\udcXX` escapes."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8")


def utf8_only(
    entries: Iterable[tuple[Path, str]], problems: list[FileProblem]
) -> list[tuple[Path, str]]:
    """The entries whose names are UTF-8; the others are reported in `problems`, not read
    (names that are not UTF-8 cannot be stored as text)."""
    out = []
    for p, r in entries:
        if r.isascii() or shown(r) == r:
            out.append((p, r))
        else:
            problems.append(FileProblem(shown(r), "file name is not valid UTF-8: rename it"))
    return out


def walk(root: Path, problems: list[FileProblem] | None = None) -> list[tuple[Path, str]]:
    """Files under `root` that are not directories (hidden names skipped), as (path, posix rel).

    Sorted as `sorted(root.rglob("*"))` sorts (by path components); directories that are symlinks
    are listed, not followed. A directory that cannot be listed (no permission, an I/O error) is
    reported in `problems` as `<its path>/` with why, never skipped silently: what it holds
    would otherwise be missing from the run without a word.
    """
    found: list[tuple[tuple[str, ...], str]] = []

    def scan(directory: str, parts: tuple[str, ...]) -> None:
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            if problems is not None:
                where = "/".join(map(shown, parts)) + "/" if parts else f"{shown(root.name)}/"
                problems.append(
                    FileProblem(
                        where,
                        f"cannot read directory: {exc.strerror or exc}; nothing under it was "
                        "read (give the user running ingest permission to list it)",
                    )
                )
            return
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                scan(entry.path, (*parts, name))
            else:
                # Regular files, symlinks and special files (FIFOs, devices, sockets): the
                # readers refuse what is not a regular file by name instead of skipping it.
                found.append(((*parts, name), entry.path))

    scan(str(root), ())
    found.sort(key=lambda f: f[0])
    return [(Path(path), "/".join(parts)) for parts, path in found]


def is_zip(rel: str) -> bool:
    """`PurePosixPath(rel).suffix == ".zip"`."""
    name = rel.rpartition("/")[2]
    return name.endswith(".zip") and name != ".zip"
