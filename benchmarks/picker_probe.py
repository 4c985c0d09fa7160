"""Before/after of the run pickers served by search (issue 26, item 5), on the history store.

`python -m benchmarks.picker_probe [SAMPLES]`: one app over a copy of `history_store`, and
`/compare?base=main&candidate=<PR run>` cold (a candidate not seen before, as in
`benchmarks.suite_team`: the page's HTML, `/_dash-layout` and `/_dash-dependencies`), its layout's
bytes, and the run page's layout bytes, with the pickers listing every run ("before":
`run_picker.RECENT` past the store's runs, which is what the pickers listed before) and the newest
50 ("after"), interleaved in one process. Prints one JSON line per sample and a summary.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import threading
from pathlib import Path


def main(samples: int = 5) -> None:
    from benchmarks.suite_dashboard import Page
    from benchmarks.suite_team import late_prs, page_seconds
    from benchmarks.synth import HistorySpec, copy_store, history_store
    from dashboard import run_picker
    from dashboard.app import layout_url
    from ingest.store import Store
    from views import urls
    from views.query.state import CompareView

    src, _ = history_store(HistorySpec())
    with tempfile.TemporaryDirectory(prefix="picker-probe-") as tmp:
        root = copy_store(src, Path(tmp) / "store")
        catalog = Store(root).runs()
        prs = late_prs(catalog)
        page = Page(root)
        client = page.client
        recent = run_picker.RECENT
        modes = {"before": 10**9, "after": recent}

        def get(path: str) -> tuple[float, int]:
            return page_seconds(client, path)

        get(urls.compare(CompareView(base="main", candidate=prs[-1])))  # imports, main's rows
        out: dict[str, list[float]] = {m: [] for m in modes}
        sizes: dict[str, int] = {}
        for i in range(samples):
            order = list(modes) if i % 2 == 0 else list(modes)[::-1]
            for j, mode in enumerate(order):
                run_picker.RECENT = modes[mode]
                candidate = prs[2 * i + j]
                seconds, size = get(urls.compare(CompareView(base="main", candidate=candidate)))
                out[mode].append(seconds)
                sizes[f"compare_{mode}"] = size
                print(json.dumps({"mode": mode, "candidate": candidate, "s": round(seconds, 4)}))
        # warm: the same candidate's page again (its comparison cached), so the pickers' part
        warm: dict[str, list[float]] = {m: [] for m in modes}
        for i in range(4 * samples):
            for mode in list(modes) if i % 2 == 0 else list(modes)[::-1]:
                run_picker.RECENT = modes[mode]
                warm[mode].append(get(urls.compare(CompareView(base="main", candidate=prs[0])))[0])
        for mode, limit in modes.items():
            run_picker.RECENT = limit
            sizes[f"run_{mode}"] = len(client.get(layout_url(urls.runs(prs[0]))).data)
        run_picker.RECENT = recent
        summary = {
            m: {"median_ms": round(1e3 * statistics.median(v)), "max_ms": round(1e3 * max(v))}
            for m, v in out.items()
        }
        summary["warm_median_ms"] = {m: round(1e3 * statistics.median(v)) for m, v in warm.items()}
        print(json.dumps({"runs": catalog.height, "samples": samples, **summary, "bytes": sizes}))
        for thread in threading.enumerate():
            if thread is not threading.current_thread() and not thread.daemon:
                thread.join(timeout=5)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
