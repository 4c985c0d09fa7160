"""Crash safety: an ingest subprocess is killed with SIGKILL at seeded random moments and at every
store write (a torn temporary file, just before a rename, just after one). After each kill the
store opens, holds for every file either all of its old rows or all of its new ones, and running
the same ingest again leaves exactly what an uninterrupted ingest leaves."""

from __future__ import annotations

import json
import random
import shutil
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq
import pytest

from ingest.pipeline import ingest_paths
from ingest.schema import Col, RejectCol, RunCol
from ingest.store import Store
from tests.reliability import figures
from tests.reliability._support import FIXTURES, Snapshot, Worker, comparable, snapshot

SEED = 20261202
WALL_TRIALS = 12
MAX_WRITE_TRIALS = 20
PHASES = ("mid_write", "before_rename", "after_rename")
INX = FIXTURES / "inferencex"


@dataclass(frozen=True)
class Setup:
    inputs: list[Path]
    pre: Path  # the store before the ingest that gets killed
    before: Snapshot
    ref: Snapshot  # what the uninterrupted ingest leaves
    seconds: float
    writes: int


def _inputs(root: Path) -> tuple[list[Path], Path]:
    """The batch that is killed (several runs, a zip, a changed and a fixed file) and the
    directory of the run as the store held it before."""
    new, old = root / "inputs", root / "old"
    shutil.copytree(INX / "agentic_agg" / "dsr1_b200_multiturn_pareto_input", new / "dsr1")
    shutil.copytree(INX / "bench_serving_random" / "glm-5", new / "glm5")
    shutil.copytree(INX / "together_runner_baselines", new / "together")
    zpath = new / "bmk_gptoss.zip"
    shutil.make_archive(
        str(zpath.with_suffix("")), "zip", INX / "raw_bench_serving" / "gptoss120b_multinode"
    )
    agg = sorted((INX / "agg_fixed_seq").glob("*.json"))
    for d in (new / "agg", old / "agg"):
        d.mkdir(parents=True)
        for p in agg:
            shutil.copy(p, d / p.name)
    doc = json.loads(agg[0].read_text())
    (old / "agg" / "fixme.json").write_text(json.dumps(doc)[:120])  # rejected before
    (new / "agg" / "fixme.json").write_text(json.dumps({**doc, "conc": 5}))  # fixed now
    (new / "agg" / agg[1].name).write_text(
        json.dumps({**json.loads(agg[1].read_text()), "tput_per_gpu": 1.5})
    )
    return [new / "dsr1", new / "glm5", new / "together", zpath, new / "agg"], old / "agg"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    root = tmp_path_factory.mktemp("crash")
    inputs, old = _inputs(root)
    pre = root / "pre"
    ingest_paths([old], Store(pre))
    assert Store(pre).rejects().height == 1
    # The reference run is a worker too, so it also says how long an ingest takes and how many
    # store writes it makes.
    ref_root = root / "ref"
    shutil.copytree(pre, ref_root)
    w = Worker(root / "ref.log")
    w.wait_ready()
    w.start({"mode": "ingest", "store": str(ref_root), "paths": [str(p) for p in inputs]})
    rc, result = w.finish()
    assert rc == 0 and result and "crash" not in result, result
    return Setup(
        inputs,
        pre,
        snapshot(Store(pre)),
        snapshot(Store(ref_root)),
        result["seconds"],
        result["writes"],
    )


def _trials(s: Setup) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    ks = list(range(1, s.writes + 1))
    if len(ks) > MAX_WRITE_TRIALS:
        ks = sorted(rng.sample(ks, MAX_WRITE_TRIALS))
    # Cycling the phase over consecutive writes still reaches every committed state: dying after
    # rename k is the state of dying before rename k+1.
    out: list[dict[str, Any]] = [{"die_at": {"write": k, "phase": PHASES[k % 3]}} for k in ks]
    out += [{"delay": rng.uniform(0.0, s.seconds)} for _ in range(WALL_TRIALS)]
    return out


def _files(df: pl.DataFrame) -> dict[tuple[str, str], pl.DataFrame]:
    return {
        (k[0], k[1]): g.sort(Col.POINT_ID)
        for k, g in comparable(df).group_by([Col.RUN_ID, Col.SOURCE_PATH], maintain_order=True)
    }


def _check_after_kill(store: Store, s: Setup) -> str:
    snap = snapshot(store)  # the store opens
    for f in store.root.rglob("*.parquet"):
        if not f.name.startswith("."):
            pq.read_table(f)
    got, old, new = _files(snap.points), _files(s.before.points), _files(s.ref.points)
    assert set(got) <= set(old) | set(new), "rows from nowhere"
    states = set()
    changed = [
        k for k in set(old) | set(new) if k not in old or k not in new or not old[k].equals(new[k])
    ]
    assert changed
    for key in changed:
        rows = got.get(key, comparable(snap.points).clear())
        was = old.get(key, rows.clear())
        will = new.get(key, rows.clear())
        if rows.equals(will):
            states.add("new")
        elif rows.equals(was):
            states.add("old")
        else:
            raise AssertionError(
                f"{key}: {rows.height} rows, neither the old {was.height} nor the new {will.height}"
            )
    assert not snap.series.height or set(snap.series.get_column("point_id")) <= set(
        snap.points.get_column(Col.POINT_ID)
    )
    return "complete" if states == {"new"} else "untouched" if states == {"old"} else "part-way"


def _assert_same(a: Snapshot, b: Snapshot) -> None:
    assert comparable(a.points).equals(comparable(b.points))
    assert a.series.sort(a.series.columns).equals(b.series.sort(b.series.columns))
    ra, rb = a.runs.drop(RunCol.INGESTED_AT), b.runs.drop(RunCol.INGESTED_AT)
    assert ra.equals(rb), (ra.join(rb, on=ra.columns, how="anti").to_dicts(), rb.to_dicts())
    key = [RejectCol.RUN_ID, RejectCol.PATH, RejectCol.FIELD, RejectCol.REASON]
    ja, jb = a.rejects.select(key).sort(key), b.rejects.select(key).sort(key)
    assert ja.equals(jb), (ja.to_dicts(), jb.to_dicts())


@pytest.mark.timeout(280)
def test_kill_9_at_random_moments_and_at_every_write(setup: Setup, tmp_path: Path) -> None:
    trials = _trials(setup)
    assert len(trials) >= 20
    states: dict[str, int] = {}
    leftovers = killed = 0
    t0 = time.perf_counter()
    # Two workers are kept warm: spawning (imports) costs more than a trial.
    spares = [Worker(tmp_path / f"w{i}.log") for i in range(min(2, len(trials)))]
    for i, trial in enumerate(trials):
        w = spares.pop(0)
        if i + len(spares) + 1 < len(trials):
            spares.append(Worker(tmp_path / f"w{i + len(spares) + 1}.log"))
        root = tmp_path / f"t{i}"
        shutil.copytree(setup.pre, root)
        spec = {"mode": "ingest", "store": str(root), "paths": [str(p) for p in setup.inputs]}
        w.wait_ready()
        w.start({**spec, "die_at": trial.get("die_at")})
        if "delay" in trial:
            time.sleep(trial["delay"])
            w.kill()
        rc, result = w.finish()
        assert result is None or "crash" not in result, result
        killed += rc == -9
        store = Store(root)
        state = _check_after_kill(store, setup)
        states[state] = states.get(state, 0) + 1
        leftovers += len(list(root.rglob(".tmp-*")))
        ingest_paths(setup.inputs, store)  # run it again: it completes the batch
        _assert_same(snapshot(store), setup.ref)
        assert not list(root.rglob(".tmp-*")), "the next writer sweeps dead writers' temp files"
        figures.add("crash", "trials_survived")
        shutil.rmtree(root)
    figures.put("crash", "trials", len(trials))
    figures.put("crash", "killed_mid_ingest", killed)
    figures.put("crash", "wall_clock_trials", WALL_TRIALS)
    figures.put("crash", "write_point_trials", len(trials) - WALL_TRIALS)
    figures.put("crash", "store_writes_per_ingest", setup.writes)
    figures.put("crash", "ingest_seconds", round(setup.seconds, 3))
    figures.put("crash", "states_after_kill", states)
    figures.put("crash", "stale_temp_files", leftovers)
    members = [
        len(zipfile.ZipFile(p).namelist()) if p.is_file() else len(list(p.iterdir()))
        for p in setup.inputs
    ]
    figures.put("crash", "batch_files", sum(members))
    figures.put("crash", "batch_points", setup.ref.points.height)
    figures.put("crash", "seconds", round(time.perf_counter() - t0, 1))
    assert killed >= 20, f"only {killed} trials died mid-ingest"
