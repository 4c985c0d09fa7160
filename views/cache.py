"""A small thread-safe LRU, one bounded by bytes, one of files that several processes share, and
the store fingerprint that invalidates them on every ingest."""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from ingest.store import Store

T = TypeVar("T")


class LRU:
    """A small thread-safe LRU of computed values, each computed once at a time: a thread
    asking for a value another thread is computing waits for it rather than computing it again
    (the two chart callbacks of one filter change, or many users opening a run just ingested,
    ask for the same analysis at the same moment)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._pending: dict[Hashable, Future[Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """The value of `key`, made by `make` when absent; when another thread is making it,
        that thread's value (or its exception)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]  # type: ignore[no-any-return]
            pending = self._pending.get(key)
            if pending is None:
                mine: Future[Any] = Future()
                self._pending[key] = mine
        if pending is not None:
            return pending.result()  # type: ignore[no-any-return]
        try:
            value = make()
        except BaseException as exc:
            with self._lock:
                del self._pending[key]
            mine.set_exception(exc)
            raise
        with self._lock:
            self._put(key, value)
            del self._pending[key]
        mine.set_result(value)
        return value

    def peek(self, key: Hashable) -> Any:
        """The value of a key (None when absent), marked as recently used."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: Hashable, value: Any) -> None:
        """Store a value, evicting the least recently used past the size."""
        with self._lock:
            self._put(key, value)

    def _put(self, key: Hashable, value: Any) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)


class ByteLRU:
    """A thread-safe LRU bounded by the bytes of what it holds (each value's size is given when
    it is put): past `limit` bytes the least recently used go; a value larger than `limit` is
    not kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.bytes = 0
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def peek(self, key: Hashable) -> Any:
        """The value of a key (None when absent), marked as recently used."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        """Keep a value of `size` bytes, evicting the least recently used past the limit."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            if size > self.limit:
                return
            self._items[key] = (value, size)
            self.bytes += size
            while self.bytes > self.limit:
                _, (_, dropped) = self._items.popitem(last=False)
                self.bytes -= dropped


class FileLRU:
    """Values of bytes kept as files in a directory that several processes share (the server
    processes of one deployment), bounded by bytes: once the files pass `limit`, the oldest
    written go until they are under three quarters of it.

    A value is written whole under a temporary name and renamed, so a reader finds a whole value
    or none; a file another process removed meanwhile is a miss. A directory that cannot be
    written (full, read-only) keeps nothing: a miss, never an error. Each process counts what it
    writes and looks at the whole directory when its count passes the limit or every
    `rescan_every` writes, so the files exceed `limit` by at most what the processes write
    between two looks."""

    def __init__(self, directory: Path, limit: int, rescan_every: int = 32) -> None:
        self.dir = directory
        self.limit = limit
        self.rescan_every = rescan_every
        self.bytes = 0  # what this process knows is there (the last look, plus its writes)
        self._writes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        """The value of `key` (a file name: letters, digits), or None."""
        try:
            return (self.dir / key).read_bytes()
        except OSError:
            return None

    def put(self, key: str, value: bytes) -> None:
        """Keep `value` under `key` (one larger than `limit` is not kept)."""
        if len(value) > self.limit:
            return
        tmp = self.dir / f".{key}.{os.getpid()}.{threading.get_ident()}"
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(value)
            os.replace(tmp, self.dir / key)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            return
        with self._lock:
            self.bytes += len(value)
            self._writes += 1
            due = self.bytes > self.limit or self._writes % self.rescan_every == 0
        if due:
            self.trim()

    def trim(self) -> None:
        """Remove the oldest files while the directory holds more than `limit` bytes (down to
        three quarters of it), and temporary files a stopped process left over a minute ago."""
        files: list[tuple[int, str, int]] = []
        stale = time.time_ns() - 60 * 10**9
        try:
            entries = list(os.scandir(self.dir))
        except OSError:
            return
        for entry in entries:
            try:
                st = entry.stat()
            except OSError:  # removed by another process meanwhile
                continue
            if entry.name.startswith("."):
                if st.st_mtime_ns < stale:
                    with contextlib.suppress(OSError):
                        Path(entry.path).unlink(missing_ok=True)
                continue
            files.append((st.st_mtime_ns, entry.name, st.st_size))
        total = sum(size for _, _, size in files)
        if total > self.limit:
            files.sort()
            for _, name, size in files:
                if total <= self.limit * 3 // 4:
                    break
                with contextlib.suppress(OSError):
                    (self.dir / name).unlink(missing_ok=True)
                total -= size
        with self._lock:
            self.bytes = total


def file_version(path: Path) -> tuple[str, int, int]:
    """A file's name, mtime and size (zeros when it does not exist, or cannot: a name too long
    for the file system, as a 300-character run id in a URL makes, names no stored file)."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return (path.name, 0, 0)
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
        return (path.name, 0, 0)
    return (path.name, st.st_mtime_ns, st.st_size)


def store_version(store: Store, run_ids: Sequence[str] | None = None) -> tuple[Any, ...]:
    """The store's committed version (changes on every commit, by any process; `run_ids` is
    kept for callers that name what they read)."""
    return (store.version(),)
