"""The run page's answers to a fixed list of filter changes, hashed: run it from two checkouts and
compare the files to show that a change to the analysis or the charts leaves every answer the same.

    uv run python -m benchmarks.filter_answers OUT STORE [STORE ...]

For each store: every run page (its HTML and its layout), then 300 control changes (the load
client's `_changed`, seeds 1-4, 75 each, on pages picked at random) posted as the two chart
callbacks, each answer computed (the per-process answer cache off). One line per answer: what was
asked, the status and the first 16 hex digits of the body's SHA-256. The page's signed token and
the assets' file times differ between processes and checkouts and are blanked before hashing.
"""

from __future__ import annotations

import hashlib
import random
import re
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote

_TOKEN = re.compile(rb"[A-Za-z0-9_-]{24}~[0-9a-f]{64}")
_MTIME = re.compile(rb"\?m=[0-9.]+")
SEEDS = (1, 2, 3, 4)
PER_SEED = 75


def digest(body: bytes) -> str:
    """The body's hash, with the per-process token and the assets' file times blanked."""
    return hashlib.sha256(_MTIME.sub(b"?m=", _TOKEN.sub(b"TOKEN", body))).hexdigest()[:16]


def answers(stores: list[Path]) -> list[str]:
    """One line per page and per callback answer (see the module docstring)."""
    import dashboard.pages.run as run_page
    from dashboard.app import WARM_THREAD, create_app, layout_url
    from ingest.store import Store
    from tests.reliability import _load_client as lc

    run_page.ANSWER_BYTES = 0  # compute every answer
    lines: list[str] = []
    sites: list[tuple[Any, ...]] = []
    for store in stores:
        app = create_app(store)
        for t in threading.enumerate():
            if t.name == WARM_THREAD:
                t.join()
        client = app.server.test_client()
        deps = client.get("/_dash-dependencies").get_json()
        main = next(d for d in deps if "main-chart.figure" in d["output"])
        second = next(d for d in deps if "second-figure.data" in d["output"])
        for run in Store(store).runs().get_column("run_id").sort().to_list():
            page = f"/inference?unofficialRun={quote(run)}"
            html, layout = client.get(page), client.get(layout_url(page))
            lines.append(
                f"page {run} {html.status_code} {digest(html.data)} "
                f"{layout.status_code} {digest(layout.data)}"
            )
            tree = layout.get_json()
            controls = lc._controls(tree)
            sites.append((client, main, second, run, controls, lc._store(tree, "second-tokens")))
    for seed in SEEDS:
        rng = random.Random(seed)
        for i in range(PER_SEED):
            client, main, second, run, page, built = rng.choice(sites)
            values, k = lc._changed(rng, page)
            search = "?unofficialRun=" + quote(run)
            a = client.post(
                "/_dash-update-component", json=lc._change(main, page, values, k, search)
            )
            b = client.post(
                "/_dash-update-component", json=lc._second(second, page, values, k, built)
            )
            lines.append(
                f"{seed}:{i} {run} {page[0][k]['field']} {a.status_code} {digest(a.data)} "
                f"{b.status_code} {digest(b.data)}"
            )
    return lines


def main(argv: list[str]) -> None:
    out, *stores = argv
    Path(out).write_text("\n".join(answers([Path(s) for s in stores])) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
