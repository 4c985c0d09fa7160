"""Simulated dashboard users for the load test (its own process, so it does not share the GIL with
the server it measures).

    python -m tests.reliability._load_client SPEC_JSON

SPEC: {"base": url, "users": n, "seconds": s, "think": [lo, hi], "seed": k, "runs": [...],
"filters": [...], "compare": [a, b]}. Each user opens the index, then repeatedly (with a think
time) opens a run page (its HTML and the layout that carries the first chart), changes a filter
(the layout of the filtered view), downloads a CSV export, or opens the index or the compare
page. Prints {"samples": [[kind, seconds, status], ...], "errors": [...]} as one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from typing import Any
from urllib.parse import quote

import httpx


async def _get(
    client: httpx.AsyncClient, kind: str, url: str, out: dict[str, Any], referer: str | None = None
) -> None:
    headers = {"X-Load-Kind": kind}
    if referer is not None:
        headers["Referer"] = referer
    t0 = time.perf_counter()
    try:
        resp = await client.get(url, headers=headers)
        dt = time.perf_counter() - t0
        out["samples"].append([kind, dt, resp.status_code])
        if resp.status_code != 200 or not resp.content:
            out["errors"].append(f"{kind} {url}: HTTP {resp.status_code}")
    except httpx.HTTPError as exc:
        out["errors"].append(f"{kind} {url}: {type(exc).__name__}: {exc}")


async def _user(i: int, spec: dict[str, Any], out: dict[str, Any], deadline: float) -> None:
    rng = random.Random(spec["seed"] * 1000 + i)
    base = spec["base"]
    lo, hi = spec["think"]
    async with httpx.AsyncClient(base_url=base, timeout=30.0) as client:
        await asyncio.sleep(rng.uniform(0, 2.0))
        await _get(client, "index_html", "/", out)
        await _get(client, "index", "/_dash-layout", out, referer=f"{base}/")
        while time.monotonic() < deadline:
            await asyncio.sleep(rng.uniform(lo, hi))
            if time.monotonic() >= deadline:
                break
            run = rng.choice(spec["runs"])
            page = f"/inference?unofficialRun={quote(run)}"
            roll = rng.random()
            if roll < 0.40:
                await _get(client, "page_html", page, out)
                await _get(client, "first_render", "/_dash-layout", out, referer=base + page)
            elif roll < 0.75:
                flt = rng.choice(spec["filters"])
                await _get(
                    client, "filter_change", "/_dash-layout", out, referer=f"{base}{page}&{flt}"
                )
            elif roll < 0.85:
                await _get(client, "export", f"/export/points.csv?unofficialRun={quote(run)}", out)
            elif roll < 0.95:
                await _get(client, "index", "/_dash-layout", out, referer=f"{base}/")
            else:
                a, b = spec["compare"]
                ref = f"{base}/compare?base={quote(a)}&candidate={quote(b)}"
                await _get(client, "compare", "/_dash-layout", out, referer=ref)


async def _main(spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"samples": [], "errors": []}
    deadline = time.monotonic() + spec["seconds"]
    await asyncio.gather(*(_user(i, spec, out, deadline) for i in range(spec["users"])))
    return out


if __name__ == "__main__":
    result = asyncio.run(_main(json.loads(sys.argv[1])))
    print(json.dumps(result))
