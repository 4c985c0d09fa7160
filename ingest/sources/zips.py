"""Zip archives: read one member at a time, only when nothing in them can escape or explode.

`open_archive` checks the whole central directory before a byte is inflated: it refuses absolute
paths, `..` escapes, symlinks, more than MAX_MEMBERS members, declared sizes beyond the limit
(the batch's byte budget left, nested zips included), archives that compress more than
MAX_RATIO:1 (per member or together), duplicate member names, names no file system can hold and a
name that is both a file and a directory. `Archive.read` then inflates one member into memory,
refusing it once it inflates past its declared size or MAX_FILE_BYTES, so at most one member's
bytes are held beyond what the directory declared; nothing is unpacked whole. `Archive.copy_to`
writes one member (a nested zip) to disk the same way. `ingest.sources.artifacts` groups the
members into units; `safe_extract` writes a whole archive under a directory (kept for callers that
want the files).
"""

from __future__ import annotations

import contextlib
import os
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from ingest.errors import UnsafeArchiveError
from ingest.sources import files
from ingest.sources.files import special_file_reason, special_kind

MAX_ARCHIVE_BYTES = 2 * 1024 * 1024 * 1024
MAX_MEMBERS = 20_000
MAX_RATIO = 200
# The longest name one path component may have on the file systems results live on.
_NAME_MAX = 255
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Member:
    """One file of an archive: its checked path inside the archive and its directory entry."""

    rel: str
    info: zipfile.ZipInfo

    @property
    def size(self) -> int:
        """The uncompressed size the archive declares."""
        return self.info.file_size


class Archive:
    """An open zip whose directory passed every check; members are read one at a time."""

    def __init__(self, zf: zipfile.ZipFile, members: list[Member], dirs: list[str]) -> None:
        self._zf = zf
        self.members = members
        #: The directory entries (posix paths, no trailing slash), for laying out a tree.
        self.dirs = dirs

    def read(self, member: Member) -> bytes:
        """The member's bytes (never more than its declared size or MAX_FILE_BYTES).

        Raises:
            UnsafeArchiveError: naming the member and the problem.
        """
        chunks: list[bytes] = []
        self._stream(member, chunks.append)
        return b"".join(chunks)

    def copy_to(self, member: Member, dest: Path) -> int:
        """Write the member to `dest` (a new file), chunk by chunk; returns its size."""
        try:
            with open(dest, "xb") as fh:
                return self._stream(member, fh.write)
        except OSError as exc:
            raise UnsafeArchiveError(
                f"member {member.rel!r} cannot be extracted: {exc.strerror or exc}"
            ) from exc

    def _stream(self, member: Member, sink: Callable[[bytes], object]) -> int:
        info, name, got = member.info, member.info.filename, 0
        try:
            src: IO[bytes]
            with self._zf.open(info) as src:
                while chunk := src.read(_CHUNK):
                    got += len(chunk)
                    if got > info.file_size or got > files.MAX_FILE_BYTES:
                        raise UnsafeArchiveError(
                            f"member {name!r} inflates beyond its declared or allowed size"
                        )
                    sink(chunk)
        except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
            raise UnsafeArchiveError(f"member {name!r} is corrupt: {exc}") from exc
        except RuntimeError as exc:  # encrypted, or a compression method zipfile lacks
            raise UnsafeArchiveError(f"member {name!r} cannot be read: {exc}") from exc
        except NotImplementedError as exc:
            raise UnsafeArchiveError(f"member {name!r} cannot be read: {exc}") from exc
        except OSError as exc:  # a local header the archive's directory points past, a full disk
            raise UnsafeArchiveError(
                f"member {name!r} cannot be extracted: {exc.strerror or exc}"
            ) from exc
        return got


def _checked_path(name: str) -> PurePosixPath:
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or (pure.parts and pure.parts[0].endswith(":")):
        raise UnsafeArchiveError(f"member {name!r} escapes the extraction directory")
    for part in pure.parts:
        if len(part.encode("utf-8", "surrogateescape")) > _NAME_MAX:
            raise UnsafeArchiveError(
                f"member {name!r} cannot be extracted: File name too long (a name part over "
                f"{_NAME_MAX} bytes)"
            )
    return pure


@contextlib.contextmanager
def open_archive(zpath: Path, limit: int | None = None) -> Iterator[Archive]:
    """Open a zip whose central directory passes every check (see the module docstring).

    Args:
        zpath: the archive.
        limit: the most uncompressed bytes the archive may declare (MAX_ARCHIVE_BYTES).

    Raises:
        UnsafeArchiveError: naming the member and the problem.
    """
    limit = MAX_ARCHIVE_BYTES if limit is None else limit
    try:
        # O_NONBLOCK: a FIFO named *.zip is refused instead of waiting for a writer forever.
        fd = os.open(zpath, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        raise UnsafeArchiveError(f"cannot open the archive: {exc.strerror or exc}") from exc
    try:
        kind = special_kind(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    if kind is not None:
        raise UnsafeArchiveError(special_file_reason(kind))
    try:
        zf = zipfile.ZipFile(zpath)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
        # ValueError: a member name flagged as UTF-8 that is not.
        raise UnsafeArchiveError(f"not a readable zip archive: {exc}") from exc
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise UnsafeArchiveError(f"{len(infos)} members, over the {MAX_MEMBERS} member limit")
        declared = sum(i.file_size for i in infos)
        if declared > limit:
            raise UnsafeArchiveError(
                f"declares {declared} bytes uncompressed, over the {limit} byte limit"
            )
        packed = max(1, sum(i.compress_size for i in infos))
        # Many members just under the per-member threshold are a bomb too.
        if declared > 1_000_000 and declared / packed > MAX_RATIO:
            raise UnsafeArchiveError(
                f"its members compress {declared / packed:.0f}:1 together (zip bomb?)"
            )
        members: list[Member] = []
        dirs: list[str] = []
        seen: dict[str, str] = {}
        for info in infos:
            name = info.filename
            if stat.S_ISLNK(info.external_attr >> 16):
                raise UnsafeArchiveError(f"member {name!r} is a symbolic link")
            pure = _checked_path(name)
            if info.is_dir():
                if pure.parts:
                    dirs.append(str(pure))
                continue
            rel = str(pure)
            if rel in seen:
                raise UnsafeArchiveError(f"member {name!r} appears twice in the archive")
            seen[rel] = name
            if (
                info.compress_size
                and info.file_size / info.compress_size > MAX_RATIO
                and info.file_size > 1_000_000
            ):
                raise UnsafeArchiveError(
                    f"member {name!r} compresses {info.file_size / info.compress_size:.0f}:1 (zip bomb?)"
                )
            members.append(Member(rel, info))
        # A name that is a file and the directory of another member cannot both be laid out.
        for m in members:
            for parent in PurePosixPath(m.rel).parents:
                if str(parent) in seen:
                    raise UnsafeArchiveError(
                        f"member {m.info.filename!r} cannot be extracted: its directory "
                        f"{seen[str(parent)]!r} is a file in the archive"
                    )
        yield Archive(zf, members, dirs)


def safe_extract(zpath: Path, target: Path, limit: int | None = None) -> list[Path]:
    """Extract a zip inside `target` (an existing directory), one member at a time, refusing
    anything that could escape or explode; returns the files written.

    Raises:
        UnsafeArchiveError: naming the member and the problem.
    """
    root = target.resolve()
    out: list[Path] = []
    with open_archive(zpath, limit) as arc:
        for d in arc.dirs:
            with contextlib.suppress(OSError):
                (root / d).mkdir(parents=True, exist_ok=True)
        for m in arc.members:
            dest = root / m.rel
            if root not in dest.resolve().parents:
                raise UnsafeArchiveError(
                    f"member {m.info.filename!r} escapes the extraction directory"
                )
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UnsafeArchiveError(
                    f"member {m.info.filename!r} cannot be extracted: {exc.strerror or exc}"
                ) from exc
            arc.copy_to(m, dest)
            out.append(dest)
    return out
