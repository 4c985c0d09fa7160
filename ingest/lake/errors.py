"""What the store raises when it cannot be written, or is in a layout it no longer reads
(re-exported by `ingest.store`)."""

from __future__ import annotations

import errno
from pathlib import Path


class StoreWriteError(OSError):
    """A store change that could not be written; the store holds what it held before."""

    def __init__(self, root: Path | str, cause: OSError) -> None:
        code = cause.errno or 0
        name = errno.errorcode.get(code, "")
        what = cause.strerror or str(cause) or type(cause).__name__
        where = f" ({cause.filename})" if cause.filename else ""
        state = "nothing of this change was stored: the store holds what it held before"
        if code in (errno.ENOSPC, errno.EDQUOT):
            hint = "; free space on that file system (or pass --store elsewhere) and run it again"
        elif code in (errno.EROFS, errno.EACCES, errno.EPERM):
            hint = "; the store is read-only here: pass --store with a writable directory"
        else:
            hint = ""
        self.message = (
            f"cannot write to the store at {root}: {what}{f' [{name}]' if name else ''}{where}; "
            f"{state}{hint}"
        )
        self.committed = False
        super().__init__(code, self.message)

    def __str__(self) -> str:
        return self.message


class LegacyStoreError(ValueError):
    """A store in the layout written before Delta Lake; `paretolens store upgrade` converts it."""

    def __init__(self, root: Path | str) -> None:
        super().__init__(
            f"the store at {root} is in the old Parquet layout (runs.parquet, points/run=*.parquet)"
            f" that this version no longer reads: convert it once with `paretolens store upgrade "
            f"--store {root}` (the old files are kept in {Path(str(root)) / 'legacy'})"
        )
