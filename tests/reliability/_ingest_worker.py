"""A subprocess for the crash and concurrency tests.

    python -m tests.reliability._ingest_worker

It imports everything, prints `ready`, then reads one JSON spec line from stdin:

- `{"mode": "ingest", "store": ..., "paths": [...], "run_id": null, "die_at": null}` ingests and
  prints a JSON result line. `die_at` = `{"write": k, "phase": "mid_write"|"before_rename"|
  "after_rename"}` makes the process SIGKILL itself at the k-th store file write: with a torn
  temporary file, before the rename, or just after it.
- `{"mode": "read", "store": ..., "stop": <path>}` reads the store in a loop (as the dashboard
  does) until the stop file exists, then prints what it saw: reads, errors, duplicate rows, and
  runs whose point count ever went down.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl
import pyarrow.parquet as pq

import ingest.store as store_mod
from ingest.pipeline import ingest_paths
from ingest.readers.registry import file_readers, unit_readers
from ingest.schema import Col
from ingest.store import Store


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _install_hooks(die_at: dict[str, Any] | None, counter: list[int]) -> None:
    real_write, real_replace = pq.write_table, os.replace
    k = die_at["write"] if die_at else -1
    phase = die_at["phase"] if die_at else ""

    def write_table(table: Any, where: Any, *args: Any, **kwargs: Any) -> None:
        counter[0] += 1
        real_write(table, where, *args, **kwargs)
        if counter[0] == k and phase == "mid_write":
            size = os.path.getsize(where)
            with open(where, "r+b") as fh:
                fh.truncate(size // 2)
            _die()

    def replace(src: Any, dst: Any) -> None:
        if counter[0] == k and phase == "before_rename":
            _die()
        real_replace(src, dst)
        if counter[0] == k and phase == "after_rename":
            _die()

    # Only the store module sees the hooks.
    store_mod.pq = SimpleNamespace(  # type: ignore[assignment]
        write_table=write_table, read_table=pq.read_table
    )
    store_mod.os = SimpleNamespace(  # type: ignore[assignment]
        replace=replace, close=os.close, fsync=os.fsync, unlink=os.unlink
    )


def _ingest(spec: dict[str, Any]) -> dict[str, Any]:
    counter = [0]
    _install_hooks(spec.get("die_at"), counter)
    t0 = time.perf_counter()
    # `paths` is one batch, or a list of batches ingested one after the other.
    paths = spec["paths"]
    batches = paths if paths and isinstance(paths[0], list) else [paths]
    out: dict[str, Any] = {"accepted": 0, "duplicates": 0, "rejected": 0, "runs": []}
    for batch in batches:
        rep = ingest_paths(
            [Path(p) for p in batch], Store(spec["store"]), run_id=spec.get("run_id")
        )
        out["accepted"] += rep.accepted
        out["duplicates"] += rep.duplicates
        out["rejected"] += len(rep.rejected)
        out["runs"] += [r for r in rep.runs if r not in out["runs"]]
    return {**out, "writes": counter[0], "seconds": time.perf_counter() - t0}


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
        out = _read(spec) if spec["mode"] == "read" else _ingest(spec)
    except Exception:
        print(json.dumps({"crash": traceback.format_exc()}), flush=True)
        sys.exit(3)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
