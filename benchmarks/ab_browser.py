"""Before/after of the 117-point run page in one session: another checkout, this tree, the floor.

    git archive HEAD | tar -x -C /tmp/before
    uv run python -m benchmarks.ab_browser /tmp/before --loads 5

Serves the same store from the other checkout (its code on PYTHONPATH) and from this tree, and the
static-plotly floor page (`benchmarks/anchor_page.py`), and loads the three interleaved, a fresh
browser per load, with this tree's probe. Prints medians of the first point, plotly's first point,
both charts drawn, and the JS bytes and script time before the first point (issue 18 findings).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import anchor_page
from benchmarks import suite_browser as sb
from benchmarks.config import Config


def summary(loads: list[dict[str, Any]]) -> str:
    """Medians of one page's loads."""
    first = sb._med([float(s["firstPoint"]) for s in loads])
    plotly = sb._med([float(s["firstPlotly"] or s["firstPoint"]) for s in loads])
    both = sb._med([max(s["main"]["done"], s["second"]["done"]) for s in loads])
    kinds = sorted({str(s["firstKind"]) for s in loads})
    return (
        f"first point {first:.0f} ms ({', '.join(kinds)}), plotly's first point {plotly:.0f} ms, "
        f"charts drawn {both:.0f} ms. {sb.weight(loads)}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ab_browser", description=__doc__)
    parser.add_argument("before", type=Path, help="a checkout of the code to compare against")
    parser.add_argument("--loads", type=int, default=5)
    args = parser.parse_args(argv)
    from dashboard.app import PLOTLY_BUNDLES
    from ingest.store import Store
    from views import urls

    cfg = Config(quick=True, workdir=Path(tempfile.mkdtemp(prefix="paretolens-ab-")))
    root = cfg.workdir / "store"
    runs, _ = sb.build(root, cfg)
    series = anchor_page.points_by_arm(Store(root).points([runs["inferencex"]]))
    page = urls.runs(runs["inferencex"])
    out: dict[str, list[dict[str, Any]]] = {"before": [], "after": [], "floor": []}
    start = os.getloadavg()
    with (
        sb.server(root, args.before.resolve()) as before,
        sb.server(root) as after,
        anchor_page.serve(series, PLOTLY_BUNDLES["basic"]) as floor,
    ):
        for base in (before, after):
            sb._warm(base, base + page)
        sb._throwaway_browser()
        for _ in range(args.loads):
            out["before"].append(sb.load(before + page))
            out["after"].append(sb.load(after + page))
            out["floor"].append(sb.load(floor, charts=(anchor_page.CHART_ID,)))
    print(f"load average {start[0]:.2f} -> {os.getloadavg()[0]:.2f}")
    for name, loads in out.items():
        print(f"{name}: {summary(loads)}")


if __name__ == "__main__":
    main()
