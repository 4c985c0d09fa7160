"""A subprocess for the crash and concurrency tests.

    python -m tests.reliability._ingest_worker

It imports everything, prints `ready`, then reads one JSON spec line from stdin:

- `{"mode": "ingest", "store": ..., "paths": [...], "run_id": null, "die_after_step": null}`
  ingests and prints a JSON result line (with `steps`: the name of every store write step it
  made, see `ingest.journal`). `die_after_step` = k makes the process SIGKILL itself right after
  the k-th write step. With `"series": true` every point gets synthetic server-metric samples
  (`_support.synthetic_series`), so the series files are written too.
- `{"mode": "recover", "store": ..., "die_after_step": k}` takes the store lock (which completes
  a committed change a killed writer left), dying after the k-th step of that.
- `{"mode": "read", "store": ..., "stop": <path>}` reads the store in a loop (as the dashboard
  does) until the stop file exists, then prints what it saw: reads, errors, duplicate rows, and
  runs whose point count ever went down.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import polars as pl

from ingest import journal
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.readers.registry import file_readers, unit_readers
from ingest.store import Store
from tests.reliability._support import synthetic_series


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _install_hook(die_after: int | None, steps: list[str]) -> None:
    def hook(name: str) -> None:
        steps.append(name)
        if len(steps) == die_after:
            _die()

    journal.STEP_HOOK = hook


def _ingest(spec: dict[str, Any]) -> dict[str, Any]:
    steps: list[str] = []
    _install_hook(spec.get("die_after_step"), steps)
    t0 = time.perf_counter()
    # `paths` is one batch, or a list of batches ingested one after the other.
    paths = spec["paths"]
    batches = paths if paths and isinstance(paths[0], list) else [paths]
    out: dict[str, Any] = {"accepted": 0, "duplicates": 0, "rejected": 0, "runs": []}
    with synthetic_series() if spec.get("series") else contextlib.nullcontext():
        for batch in batches:
            rep = ingest_paths(
                [Path(p) for p in batch], Store(spec["store"]), run_id=spec.get("run_id")
            )
            out["accepted"] += rep.accepted
            out["duplicates"] += rep.duplicates
            out["rejected"] += len(rep.rejected)
            out["runs"] += [r for r in rep.runs if r not in out["runs"]]
    return {**out, "writes": len(steps), "steps": steps, "seconds": time.perf_counter() - t0}


def _recover(spec: dict[str, Any]) -> dict[str, Any]:
    steps: list[str] = []
    _install_hook(spec.get("die_after_step"), steps)
    with Store(spec["store"]).lock():
        pass
    return {"steps": steps}


def _read(spec: dict[str, Any]) -> dict[str, Any]:
    store, stop = Store(spec["store"]), Path(spec["stop"])
    reads, errors, dupes, regressions = 0, [], 0, 0
    last: dict[str, int] = {}
    while True:
        done = stop.exists()
        try:
            runs = store.run_ids()
            store.points()
            for rid in runs:
                pts = store.points([rid])
                n = pts.height
                if pts.get_column(Col.POINT_ID).n_unique() != n:
                    dupes += 1
                if n < last.get(rid, 0):
                    regressions += 1
                last[rid] = max(n, last.get(rid, 0))
                store.rejects([rid])
                store.timeseries([rid])
                store.collect(lambda lf: lf.filter(pl.col(Col.CONC) > 0), [rid])
            reads += 1
        except Exception as exc:  # the test asserts there are none; keep reading to count them
            where = traceback.extract_tb(exc.__traceback__)[-4:]
            trail = " <- ".join(
                f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(where)
            )
            errors.append(f"{type(exc).__name__}: {exc} [{trail}]")
            try:
                store.points()
                errors.append("a re-read right after succeeded")
            except Exception as again:
                errors.append(f"the re-read failed too: {again}")
        if done:
            break
    return {
        "reads": reads,
        "errors": errors[:20],
        "n_errors": len(errors),
        "duplicates": dupes,
        "regressions": regressions,
        "last": last,
    }


def _warm_up() -> None:
    # First calls import more (pyarrow -> pandas); pay for that before the timed ingest.
    agg = Path(__file__).resolve().parents[1] / "fixtures" / "inferencex" / "agg_fixed_seq"
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "s")
        ingest_paths(sorted(agg.glob("*.json"))[:1], store, run_id="warm")
        store.points()
        store.runs()


def main() -> None:
    file_readers()
    unit_readers()
    _warm_up()
    print("ready", flush=True)
    spec = json.loads(sys.stdin.readline())
    try:
        modes = {"read": _read, "recover": _recover, "ingest": _ingest}
        out = modes[spec["mode"]](spec)
    except Exception:
        print(json.dumps({"crash": traceback.format_exc()}), flush=True)
        sys.exit(3)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
