"""Zip archives: extracted only when nothing in them can escape the target or explode.

`safe_extract` refuses absolute paths, `..` escapes, symlinks, more than MAX_MEMBERS members,
declared sizes beyond the limit (MAX_ARCHIVE_BYTES for one input, nested zips included), members
that inflate past their declared size or MAX_FILE_BYTES, archives that compress more than
MAX_RATIO:1 (per member or together) and duplicate member names. `ingest.sources.artifacts` walks what
it extracted.
"""

from __future__ import annotations

import os
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from ingest.errors import UnsafeArchiveError
from ingest.sources import files
from ingest.sources.files import special_file_reason, special_kind

MAX_ARCHIVE_BYTES = 2 * 1024 * 1024 * 1024
MAX_MEMBERS = 20_000
MAX_RATIO = 200


def safe_extract(zpath: Path, target: Path, limit: int | None = None) -> list[Path]:
    """Extract a zip inside `target`, refusing anything that could escape or explode.

    Args:
        zpath: the archive.
        target: an existing directory to extract into.
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
        root = target.resolve()
        out: list[Path] = []
        seen: set[str] = set()
        for info in infos:
            name = info.filename
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise UnsafeArchiveError(f"member {name!r} is a symbolic link")
            pure = PurePosixPath(name.replace("\\", "/"))
            if (
                pure.is_absolute()
                or ".." in pure.parts
                or (pure.parts and pure.parts[0].endswith(":"))
            ):
                raise UnsafeArchiveError(f"member {name!r} escapes the extraction directory")
            dest = (root / pure).resolve()
            if root not in dest.parents and dest != root:
                raise UnsafeArchiveError(f"member {name!r} escapes the extraction directory")
            if info.is_dir():
                try:
                    dest.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise UnsafeArchiveError(
                        f"member {name!r} cannot be extracted: {exc.strerror or exc}"
                    ) from exc
                continue
            if str(pure) in seen:
                raise UnsafeArchiveError(f"member {name!r} appears twice in the archive")
            seen.add(str(pure))
            if (
                info.compress_size
                and info.file_size / info.compress_size > MAX_RATIO
                and info.file_size > 1_000_000
            ):
                raise UnsafeArchiveError(
                    f"member {name!r} compresses {info.file_size / info.compress_size:.0f}:1 (zip bomb?)"
                )
            written = 0
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(dest, "wb") as fh:
                    while chunk := src.read(1 << 20):
                        written += len(chunk)
                        if written > info.file_size or written > files.MAX_FILE_BYTES:
                            raise UnsafeArchiveError(
                                f"member {name!r} inflates beyond its declared or allowed size"
                            )
                        fh.write(chunk)
            except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
                raise UnsafeArchiveError(f"member {name!r} is corrupt: {exc}") from exc
            except RuntimeError as exc:  # encrypted, or a compression method zipfile lacks
                raise UnsafeArchiveError(f"member {name!r} cannot be read: {exc}") from exc
            except OSError as exc:  # a name the file system refuses, a file where a dir must be
                raise UnsafeArchiveError(
                    f"member {name!r} cannot be extracted: {exc.strerror or exc}"
                ) from exc
            out.append(dest)
        return out
