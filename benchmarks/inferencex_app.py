"""The InferenceX app, built offline from its public repository, served over a dump of our points.

The interactive suite measures the run page side by side with the InferenceX app
(SemiAnalysisAI/InferenceX-app) drawing the same points. The app is GPLv3: nothing of it is in
this project. A user builds it once, in a folder of their own, from the pinned commit
(`docs/performance.md`, "The InferenceX app anchor") and names that folder in
`PARETOLENS_INFERENCEX_APP`. This module finds the build and runs its production server
(`next start`) on a loopback port with `DUMP_DIR` set to a dump written by
`benchmarks.inferencex_dump`, so the app reads its tables from that dump instead of Postgres.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from benchmarks.inferencex_dump import AppView
from benchmarks.process import free_port, started

ENV = "PARETOLENS_INFERENCEX_APP"
BUILD_ID = Path("packages/app/.next/BUILD_ID")  # written by a finished `next build`
NEXT_BIN = Path("packages/app/node_modules/next/dist/bin/next")


def find_app() -> tuple[Path | None, str]:
    """The built app's folder, or None; and where it was looked for (for the section's notes)."""
    named = os.environ.get(ENV)
    if not named:
        return None, f"`{ENV}` is not set (it names a built InferenceX-app checkout)"
    root = Path(named)
    for need in (BUILD_ID, NEXT_BIN):
        if not (root / need).is_file():
            return None, f"`{ENV}={root}`: no {need} there (not built)"
    if shutil.which("node") is None:
        return None, f"`{ENV}={root}`: no `node` on PATH"
    return root, f"`{ENV}={root}`"


def _get(url: str, timeout: float) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        body: bytes = resp.read()
        return body


@contextlib.contextmanager
def serve(root: Path, dump: Path, view: AppView | None = None) -> Iterator[str]:
    """`next start` of the app in `root` over the dump in `dump`, on a free loopback port; yields
    the URL of its page for `view`, once that page and its benchmarks API have answered.

    Raises:
        RuntimeError: the server did not answer within 120 s (with the end of its log).
    """
    view = view or AppView()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_READONLY_URL"}
    env |= {"DUMP_DIR": str(dump), "NEXT_TELEMETRY_DISABLED": "1", "NODE_ENV": "production"}
    base = f"http://127.0.0.1:{port}"

    def ready() -> None:
        _get(base + view.page, timeout=30)  # the first request renders the route
        # the first API call loads the dump into the server's memory
        _get(f"{base}/api/v1/benchmarks?model={view.display}", timeout=30)

    cmd = ["node", str(root / NEXT_BIN), "start", "-p", str(port), "-H", "127.0.0.1"]
    cwd = root / "packages" / "app"
    with started(cmd, ready, what="the InferenceX app", timeout=120, poll=0.5, cwd=cwd, env=env):
        yield base + view.page
