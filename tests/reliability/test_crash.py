"""Crash safety: an ingest subprocess is SIGKILLed right after each of its store write steps in
turn (every boundary `ingest.journal` marks: each staged file, the directory fsyncs, the
journal's write and rename, each rename into place, the journal's removal), then after each step
of the recovery that completes a committed change, and at a few seeded random moments.

After every kill the store opens and holds exactly what it held before the ingest or exactly
what the uninterrupted ingest leaves (points, series, rejects, catalog): never a mix, never a
doubled series. The next writer completes or drops the change and sweeps the temporary files,
and running the same ingest again leaves exactly what an uninterrupted ingest leaves."""

from __future__ import annotations

import random
import shutil
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ingest.contract.schema import RejectCol, RunCol, SeriesCol
from ingest.journal import JOURNAL
from ingest.pipeline import ingest_paths
from ingest.store import Store
from tests.reliability import figures
from tests.reliability._support import (
    Snapshot,
    Worker,
    comparable,
    crash_batch,
    snapshot,
    synthetic_series,
)

SEED = 20261202
WALL_TRIALS = 6
SERIES_KEY = [SeriesCol.RUN_ID, SeriesCol.POINT_ID, SeriesCol.METRIC, SeriesCol.LABELS, SeriesCol.T]


@dataclass(frozen=True)
class Setup:
    inputs: list[Path]
    pre: Path  # the store before the ingest that gets killed
    before: Snapshot
    ref: Snapshot  # what the uninterrupted ingest leaves
    seconds: float
    steps: list[str]  # the write steps of the uninterrupted ingest, in order


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    root = tmp_path_factory.mktemp("crash")
    inputs, old = crash_batch(root)
    pre = root / "pre"
    with synthetic_series():
        ingest_paths([old], Store(pre))
    assert Store(pre).rejects().height == 1 and Store(pre).timeseries().height > 0
    # The reference run is a worker too, so it also lists the store write steps an ingest makes.
    ref_root = root / "ref"
    shutil.copytree(pre, ref_root)
    w = Worker(root / "ref.log")
    w.wait_ready()
    w.start(_spec(ref_root, inputs))
    rc, result = w.finish()
    assert rc == 0 and result and "crash" not in result, result
    return Setup(
        inputs,
        pre,
        snapshot(Store(pre)),
        snapshot(Store(ref_root)),
        result["seconds"],
        result["steps"],
    )


def _spec(root: Path, inputs: list[Path], **more: Any) -> dict[str, Any]:
    return {
        "mode": "ingest",
        "store": str(root),
        "paths": [str(p) for p in inputs],
        "series": True,
        **more,
    }


def _same(a: Snapshot, b: Snapshot) -> bool:
    if not comparable(a.points).equals(comparable(b.points)):
        return False
    if not a.series.sort(SERIES_KEY).equals(b.series.sort(SERIES_KEY)):
        return False
    if not a.runs.drop(RunCol.INGESTED_AT).equals(b.runs.drop(RunCol.INGESTED_AT)):
        return False
    key = [RejectCol.RUN_ID, RejectCol.PATH, RejectCol.FIELD, RejectCol.REASON, RejectCol.OUTCOME]
    return a.rejects.select(key).sort(key).equals(b.rejects.select(key).sort(key))


def _state(store: Store, s: Setup) -> str:
    """'before' or 'after' (the store opens and holds one of them whole), else fail."""
    snap = snapshot(store)
    assert not snap.series.select(SERIES_KEY).is_duplicated().any(), "a doubled series"
    if _same(snap, s.before):
        return "before"
    if _same(snap, s.ref):
        return "after"
    raise AssertionError(
        f"a mix: {snap.points.height} points ({s.before.points.height} before, "
        f"{s.ref.points.height} after), {snap.series.height} series, "
        f"{snap.rejects.height} rejects, {snap.runs.height} runs"
    )


def _recovered(store: Store, s: Setup, state: str) -> int:
    """Take the writer lock (which completes or drops the change), then check that the files at
    their own names hold the same state with no journal or temporary file left. Returns how
    many temporary files there were."""
    leftovers = len(list(store.root.rglob(".tmp-*")))
    with store.lock():
        pass
    assert not (store.root / JOURNAL).exists()
    assert not list(store.root.rglob(".tmp-*")), "the next writer sweeps dead writers' files"
    for f in store.root.rglob("*.parquet"):
        pq.read_table(f)  # every file whole
    assert _state(store, s) == state
    return leftovers


def _again(store: Store, s: Setup) -> None:
    with synthetic_series():
        ingest_paths(s.inputs, store)  # run it again: it completes the batch
    assert _same(snapshot(store), s.ref)


class Pool:
    """Workers spawned ahead (imports cost more than a trial)."""

    def __init__(self, where: Path, n: int) -> None:
        self.where, self.n, self.made = where, n, 0
        self.spares = [self._new() for _ in range(min(2, n))]

    def _new(self) -> Worker:
        self.made += 1
        return Worker(self.where / f"w{self.made}.log")

    def take(self) -> Worker:
        w = self.spares.pop(0)
        if self.made < self.n:
            self.spares.append(self._new())
        w.wait_ready()
        return w


@pytest.mark.timeout(420)
def test_kill_9_after_every_store_write_step(setup: Setup, tmp_path: Path) -> None:
    steps = setup.steps
    commit = steps.index("commit: journal renamed into place") + 1
    assert len(steps) >= 20, steps
    rng = random.Random(SEED)
    trials: list[dict[str, Any]] = [{"die_after_step": k} for k in range(1, len(steps) + 1)]
    trials += [{"delay": rng.uniform(0.0, setup.seconds)} for _ in range(WALL_TRIALS)]
    pool = Pool(tmp_path, len(trials))
    states: Counter[str] = Counter()
    leftovers = killed = 0
    committed_copy = tmp_path / "committed"
    t0 = time.perf_counter()
    for i, trial in enumerate(trials):
        root = tmp_path / f"t{i}"
        shutil.copytree(setup.pre, root)
        w = pool.take()
        w.start(_spec(root, setup.inputs, die_after_step=trial.get("die_after_step")))
        if "delay" in trial:
            time.sleep(trial["delay"])
            w.kill()
        rc, result = w.finish()
        assert result is None or "crash" not in result, result
        killed += rc == -9
        k = trial.get("die_after_step")
        if k is not None:
            assert rc == -9, f"the worker was to die after step {k} ({steps[k - 1]})"
        store = Store(root)
        state = _state(store, setup)  # read before any writer recovers
        if k is not None:
            # Before the journal's rename nothing is visible; from it on, all of it is.
            assert state == ("after" if k >= commit else "before"), (k, steps[k - 1], state)
            if k == commit:
                shutil.copytree(root, committed_copy)
        states[state] += 1
        leftovers += _recovered(store, setup, state)
        _again(store, setup)
        figures.add("crash", "trials_survived")
        shutil.rmtree(root)
    assert killed >= len(steps), f"only {killed} of {len(trials)} trials died mid-ingest"
    figures.put("crash", "trials", len(trials))
    figures.put("crash", "killed_mid_ingest", killed)
    figures.put("crash", "wall_clock_trials", WALL_TRIALS)
    figures.put("crash", "boundary_trials", len(steps))
    figures.put("crash", "boundaries", _kinds(steps))
    figures.put("crash", "commit_step", commit)
    figures.put("crash", "ingest_seconds", round(setup.seconds, 3))
    figures.put("crash", "states_after_kill", dict(states))
    figures.put("crash", "stale_temp_files", leftovers)
    members = [
        len(zipfile.ZipFile(p).namelist()) if p.is_file() else len(list(p.iterdir()))
        for p in setup.inputs
    ]
    figures.put("crash", "batch_files", sum(members))
    figures.put("crash", "batch_points", setup.ref.points.height)
    figures.put("crash", "batch_series", setup.ref.series.height)
    figures.put("crash", "batch_runs", setup.ref.runs.height - setup.before.runs.height + 1)
    figures.put("crash", "seconds", round(time.perf_counter() - t0, 1))
    _kill_during_recovery(setup, committed_copy, tmp_path)


def _kill_during_recovery(setup: Setup, committed: Path, tmp_path: Path) -> None:
    """The store a kill right after the commit point left (journal in place, nothing renamed):
    its recovery is killed after each of its steps in turn, and the next one completes it."""
    assert (committed / JOURNAL).exists()
    probe = tmp_path / "probe"
    shutil.copytree(committed, probe)
    (tmp_path / "r").mkdir()
    w = Worker(tmp_path / "r" / "probe.log")
    w.wait_ready()
    w.start({"mode": "recover", "store": str(probe)})
    rc, result = w.finish()
    assert rc == 0 and result is not None, result
    rsteps = result["steps"]
    assert any(s.startswith("recover: rename") for s in rsteps), rsteps
    pool = Pool(tmp_path / "r", len(rsteps))
    for j in range(1, len(rsteps) + 1):
        root = tmp_path / f"r{j}"
        shutil.copytree(committed, root)
        w = pool.take()
        w.start({"mode": "recover", "store": str(root), "die_after_step": j})
        rc, _ = w.finish()
        assert rc == -9, (j, rsteps[j - 1])
        store = Store(root)
        assert _state(store, setup) == "after", (j, rsteps[j - 1])
        _recovered(store, setup, "after")
        figures.add("crash", "recovery_trials_survived")
        shutil.rmtree(root)
    figures.put("crash", "recovery_boundaries", len(rsteps))


def _kinds(steps: list[str]) -> dict[str, int]:
    """How many boundaries of each kind ('staged points/...' -> 'staged')."""
    return dict(Counter(s.split(" ")[0].rstrip(":") for s in steps))
