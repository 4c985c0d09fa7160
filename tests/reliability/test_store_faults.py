"""A store that cannot be written: a disk error after every write step in turn (injected), a real
full file system (a small tmpfs, filled to several levels), a read-only store (a read-only bind
mount; and through the CLI), and a store written before the journal (it opens and takes ingests).

Each failed ingest leaves the store holding exactly what it held before (or, when the failure
comes after the commit point, exactly the completed change, which the next writer finishes),
and says why: `StoreWriteError` names the store, the cause and what the store now holds."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ingest import journal
from ingest.journal import JOURNAL, StoreWriteError
from ingest.pipeline import ingest_paths
from ingest.store import Store
from tests.reliability import figures
from tests.reliability._support import (
    FIXTURES,
    REPO,
    Snapshot,
    crash_batch,
    snapshot,
    synthetic_series,
)
from tests.reliability.test_crash import SERIES_KEY, _same

LEGACY = Path(__file__).resolve().parent / "legacy_store"
UNCHANGED = "nothing of this change was stored: the store holds what it held before"


@dataclass(frozen=True)
class Batch:
    inputs: list[Path]
    pre: Path
    before: Snapshot
    after: Snapshot
    steps: list[str]


@contextlib.contextmanager
def _hook(fn: Callable[[str], None]) -> Iterator[None]:
    journal.STEP_HOOK = fn
    try:
        yield
    finally:
        journal.STEP_HOOK = None


def _ingest(b: Batch, root: Path) -> None:
    with synthetic_series():
        ingest_paths(b.inputs, Store(root))


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Batch:
    root = tmp_path_factory.mktemp("faults")
    inputs, old = crash_batch(root)
    pre = root / "pre"
    with synthetic_series():
        ingest_paths([old], Store(pre))
    ref = root / "ref"
    shutil.copytree(pre, ref)
    steps: list[str] = []
    with _hook(steps.append):
        _ingest(Batch(inputs, pre, snapshot(Store(pre)), snapshot(Store(pre)), []), ref)
    return Batch(inputs, pre, snapshot(Store(pre)), snapshot(Store(ref)), steps)


def _state(root: Path, b: Batch) -> str:
    snap = snapshot(Store(root))
    assert not snap.series.select(SERIES_KEY).is_duplicated().any(), "a doubled series"
    if _same(snap, b.before):
        return "before"
    if _same(snap, b.after):
        return "after"
    raise AssertionError(f"a mix: {snap.points.height} points, {snap.series.height} series")


def _settles(root: Path, b: Batch, state: str) -> None:
    """The next writer completes or drops the change; the same ingest then completes it."""
    with Store(root).lock():
        pass
    assert not (root / JOURNAL).exists() and not list(root.rglob(".tmp-*"))
    assert _state(root, b) == state
    _ingest(b, root)
    assert _state(root, b) == "after"


@pytest.mark.timeout(300)
def test_a_disk_error_after_every_write_step(batch: Batch, tmp_path: Path) -> None:
    commit = batch.steps.index("commit: journal renamed into place") + 1
    outcomes: dict[str, int] = {}
    for k in range(1, len(batch.steps) + 1):
        root = tmp_path / f"k{k}"
        shutil.copytree(batch.pre, root)
        seen: list[str] = []

        def fail(name: str, k: int = k, seen: list[str] = seen) -> None:
            seen.append(name)
            if len(seen) == k:
                raise OSError(errno.EIO if k % 2 else errno.ENOSPC, "injected", name)

        with _hook(fail), pytest.raises(StoreWriteError) as caught:
            _ingest(batch, root)
        msg = str(caught.value)
        assert str(root) in msg and "injected" in msg, msg
        state = _state(root, batch)  # read before any writer recovers
        if k < commit:
            assert state == "before" and UNCHANGED in msg, (k, batch.steps[k - 1], msg)
            assert not caught.value.committed
        else:
            assert state == "after" and "committed in the store's journal" in msg, (k, msg)
        outcomes[state] = outcomes.get(state, 0) + 1
        _settles(root, batch, state)
        figures.add("store_faults", "injected_errors_survived")
        shutil.rmtree(root)
    figures.put("store_faults", "injected_error_boundaries", len(batch.steps))
    figures.put("store_faults", "injected_error_states", outcomes)


def _can_mount() -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    probe = Path("/proc/self/status").read_text()
    caps = next((ln for ln in probe.splitlines() if ln.startswith("CapEff:")), "CapEff: 0")
    return bool(int(caps.split()[1], 16) & (1 << 21))  # CAP_SYS_ADMIN


needs_mount = pytest.mark.skipif(not _can_mount(), reason="needs root with CAP_SYS_ADMIN (mount)")


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, timeout=30)


@contextlib.contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir(parents=True)
    _run("mount", "-t", "tmpfs", "-o", f"size={size}", "paretolens-test", str(where))
    try:
        yield where
    finally:
        _run("umount", "-l", str(where))


@contextlib.contextmanager
def _read_only(src: Path, where: Path) -> Iterator[Path]:
    where.mkdir(parents=True)
    _run("mount", "--bind", str(src), str(where))
    try:
        _run("mount", "-o", "remount,bind,ro", str(where))
        yield where
    finally:
        _run("umount", "-l", str(where))


def _fill(fs: Path, leave: int) -> None:
    """Fill the file system until `leave` bytes are free."""
    st = os.statvfs(fs)
    size = max(0, st.f_bavail * st.f_frsize - leave)
    with open(fs / "filler", "wb") as fh:
        chunk = b"\0" * (1 << 16)
        while size > 0:
            n = min(size, len(chunk))
            try:
                fh.write(chunk[:n])
                fh.flush()
            except OSError:
                break
            size -= n


@needs_mount
@pytest.mark.timeout(300)
def test_a_full_file_system_leaves_the_store_as_it_was(batch: Batch, tmp_path: Path) -> None:
    failed_at: list[str] = []
    free_levels = [0, 4 << 10, 16 << 10, 64 << 10, 128 << 10, 256 << 10, 384 << 10, 512 << 10]
    free_levels += [768 << 10, 1 << 20, 2 << 20, 4 << 20, 16 << 20]
    completed = 0
    for i, free in enumerate(free_levels):
        with _tmpfs(tmp_path / f"fs{i}", "24m") as fs:
            root = fs / "store"
            shutil.copytree(batch.pre, root)
            _fill(fs, free)
            seen: list[str] = []
            try:
                with _hook(seen.append):
                    _ingest(batch, root)
            except StoreWriteError as exc:
                msg = str(exc)
                assert exc.errno == errno.ENOSPC, msg
                assert "No space left on device" in msg and UNCHANGED in msg, msg
                assert "free space on that file system" in msg, msg
                assert _state(root, batch) == "before"
                assert not list(root.rglob(".tmp-*")), "a failed writer removes what it staged"
                failed_at.append(seen[-1] if seen else "before the first step")
                os.unlink(fs / "filler")  # space again: the same ingest completes
                _settles(root, batch, "before")
            else:
                assert _state(root, batch) == "after"
                completed += 1
            figures.add("store_faults", "full_disk_trials")
    assert failed_at, "no fill level was full enough to fail the ingest"
    assert completed, "no fill level left room enough for the ingest"
    figures.put("store_faults", "full_disk_failures", len(failed_at))
    figures.put("store_faults", "full_disk_completed", completed)
    figures.put("store_faults", "full_disk_failed_after", sorted(set(failed_at)))


@needs_mount
@pytest.mark.timeout(120)
def test_a_read_only_store_is_refused_and_still_read(batch: Batch, tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(batch.pre, src)
    with _read_only(src, tmp_path / "ro") as ro:
        with pytest.raises(StoreWriteError) as caught:
            _ingest(batch, ro)
        msg = str(caught.value)
        assert caught.value.errno == errno.EROFS and "Read-only file system" in msg, msg
        assert UNCHANGED in msg and "pass --store with a writable directory" in msg, msg
        assert _state(ro, batch) == "before"  # readers read it as it is
        # The CLI says why and exits 2 (nothing stored), without a traceback.
        cli_store = ["--store", str(ro), "--json"]
        proc = subprocess.run(
            [sys.executable, "-m", "paretolens.cli", "ingest", str(batch.inputs[-1]), *cli_store],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
        said = " ".join(proc.stderr.split())  # rich wraps long lines
        assert "Read-only file system" in said and "Traceback" not in said, said
        assert UNCHANGED in said, said
        assert _state(ro, batch) == "before"
    figures.put("store_faults", "read_only_refused", True)
    figures.put("store_faults", "read_only_cli_exit", proc.returncode)
    figures.put("store_faults", "read_only_cli_message", said[:400])


@needs_mount
@pytest.mark.timeout(120)
def test_a_committed_change_is_read_whole_from_a_read_only_store(
    batch: Batch, tmp_path: Path
) -> None:
    """A writer that failed after its commit point (here on the third rename) left a journal;
    a reader that cannot write (read-only) still sees the whole change."""
    src = tmp_path / "src"
    shutil.copytree(batch.pre, src)
    renames = [i for i, s in enumerate(batch.steps, 1) if s.startswith("rename")]
    seen: list[str] = []

    def fail(name: str) -> None:
        seen.append(name)
        if len(seen) == renames[2]:
            raise OSError(errno.EIO, "injected", name)

    with _hook(fail), pytest.raises(StoreWriteError):
        _ingest(batch, src)
    assert (src / JOURNAL).exists()
    with _read_only(src, tmp_path / "ro") as ro:
        assert _state(ro, batch) == "after"
        with pytest.raises(StoreWriteError, match="Read-only file system"):
            _ingest(batch, ro)
    _settles(src, batch, "after")
    figures.put("store_faults", "read_only_pending_journal_read_whole", True)


def test_a_store_written_before_the_journal_opens_and_takes_ingests(tmp_path: Path) -> None:
    root = tmp_path / "legacy"
    shutil.copytree(LEGACY, root)
    store = Store(root)
    old = snapshot(store)
    assert old.points.height == 4 and old.series.height == 9 and old.rejects.height == 1
    assert set(old.runs.get_column("run_id")) == {"legacy-agg", "sweep 2026-01 (retry)"}
    assert list(root.rglob(".tmp-*")), "the legacy store carries a dead writer's temporary file"
    new = FIXTURES / "inferencex" / "bench_serving_random" / "glm-5"
    rep = ingest_paths([new], store, run_id="glm-5")
    got = snapshot(store)
    assert not list(root.rglob(".tmp-*")) and not (root / JOURNAL).exists()
    assert got.points.height == old.points.height + rep.accepted and rep.accepted > 0
    for rid in ("legacy-agg", "sweep 2026-01 (retry)"):
        assert (
            got.run_points(rid).drop("ingested_at").equals(old.run_points(rid).drop("ingested_at"))
        )
    assert got.series.sort(SERIES_KEY).equals(old.series.sort(SERIES_KEY))
    figures.put("store_faults", "legacy_store_opened", True)
    figures.put("store_faults", "legacy_points_kept", old.points.height)
