"""Before/after of freezing the start-up heap (`dashboard.app.settle_heap`; issue 26, item 5).

`python -m benchmarks.heap_probe [ROUNDS] [SAMPLES]`: ROUNDS x 2 processes, "before" and "after"
alternating (which goes first alternates too), each one app over a copy of `history_store` (3,000
runs) and SAMPLES cold `/compare?base=main&candidate=<PR run>` as `benchmarks.suite_team` measures
it (the HTML, `/_dash-layout`, `/_dash-dependencies`, a candidate not seen before each sample).
"after" is the app as served now (`settle_heap`: the start-up garbage collected and the heap
frozen); "before" has no `settle_heap`, as it was served before. The collector's state is per
process (how many objects a full collection walks, and when the next one comes), hence a process
per mode. Each sample's time
in the cyclic collector (`gc.callbacks`) and its full collections are printed; a summary last.
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def one(mode: str, samples: int) -> None:
    """One process's samples, as JSON lines."""
    from benchmarks.suite_dashboard import Page
    from benchmarks.suite_team import late_prs, page_seconds
    from benchmarks.synth import HistorySpec, copy_store, history_store
    from ingest.store import Store
    from views import urls
    from views.query.state import CompareView

    started: list[float] = []
    spent: list[tuple[int, float]] = []

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            spent.append((int(info["generation"]), time.perf_counter() - started.pop()))

    src, _ = history_store(HistorySpec())
    with tempfile.TemporaryDirectory(prefix="heap-probe-") as tmp:
        root = copy_store(src, Path(tmp) / "store")
        prs = late_prs(Store(root).runs())
        if mode == "before":  # the app as it was served: no settle_heap
            import dashboard.app

            dashboard.app.settle_heap = lambda: None
        client = Page(root).client  # "after": Page calls settle_heap, as the servers do

        def get(path: str) -> float:
            return page_seconds(client, path)[0]

        get(urls.compare(CompareView(base="main", candidate=prs[-1])))  # main's rows
        gc.callbacks.append(on_gc)
        for i in range(samples):
            spent.clear()
            seconds = get(urls.compare(CompareView(base="main", candidate=prs[i])))
            row = {
                "mode": mode,
                "s": round(seconds, 4),
                "gc_ms": round(1e3 * sum(s for _, s in spent), 1),
                "full": sum(1 for g, _ in spent if g == 2),
            }
            print(json.dumps(row), flush=True)
        gc.callbacks.remove(on_gc)
        for thread in threading.enumerate():
            if thread is not threading.current_thread() and not thread.daemon:
                thread.join(timeout=5)


def main(rounds: int, samples: int) -> None:
    rows: list[dict[str, Any]] = []
    for r in range(rounds):
        for mode in ("before", "after") if r % 2 == 0 else ("after", "before"):
            cmd = [sys.executable, "-m", "benchmarks.heap_probe", "--one", mode, str(samples)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            got = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
            for row in got:
                print(json.dumps(row))
            rows += got

    def p95(v: list[float]) -> float:
        return sorted(v)[max(0, round(0.95 * len(v)) - 1)]

    summary: dict[str, Any] = {}
    for mode in ("before", "after"):
        v = [row["s"] for row in rows if row["mode"] == mode]
        summary[mode] = {
            "samples": len(v),
            "median_ms": round(1e3 * statistics.median(v)),
            "p95_ms": round(1e3 * p95(v)),
            "max_ms": round(1e3 * max(v)),
            "gc_ms_max": max(row["gc_ms"] for row in rows if row["mode"] == mode),
            "gc_ms_total": round(sum(row["gc_ms"] for row in rows if row["mode"] == mode)),
            "full_collections": sum(row["full"] for row in rows if row["mode"] == mode),
        }
    print(json.dumps({"rounds": rounds, "samples_per_process": samples, **summary}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2], int(sys.argv[3]))
    else:
        main(*(int(a) for a in sys.argv[1:3])) if len(sys.argv) > 2 else main(4, 12)
