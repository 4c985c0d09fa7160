"""Simulated dashboard users for the load test (its own process, so it does not share the GIL with
the server it measures).

    python -m tests.reliability._load_client SPEC_JSON

SPEC: {"base": url, "users": n, "seconds": s, "think": [lo, hi], "seed": k, "runs": [...],
"compare": [a, b]}. Each user opens the index, then repeatedly (with a think time) opens a run
page (its HTML and the layout, which carries the first chart, then the second chart's callback
the page posts once the first is drawn), changes a control on it (both charts' callbacks,
posted together as the Dash renderer posts them), downloads a CSV export, or opens the index or
the compare page. Prints {"samples": [[kind, seconds, status], ...],
"errors": [...], "loop_lag": [seconds, ...]} as one JSON line (`loop_lag`: how late the client's
event loop woke from 20 ms sleeps, the part of every latency that is the load generator's own).
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

from dashboard.app import layout_url

_KEY = {"sort_keys": True, "separators": (",", ":")}
# Controls a user changes, and how: a new single value, or one option of a multi-select.
_CHANGES = ("x", "y", "x2", "labels", "envelope", "toggles", "seq", "arm", "spec", "offload")


def _controls(layout: Any) -> tuple[list[dict[str, Any]], list[Any], list[Any], Any]:
    """The run page's control ids, values and options, and the trace-tokens store, from a layout."""
    ids: list[dict[str, Any]] = []
    values: list[Any] = []
    options: list[Any] = []
    tokens: list[Any] = [None]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("props")
            if isinstance(props, dict):
                cid = props.get("id")
                if isinstance(cid, dict) and cid.get("type") == "control":
                    ids.append(cid)
                    values.append(props.get("value"))
                    options.append(props.get("options"))
                elif cid == "trace-tokens":
                    tokens[0] = props.get("data")
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(layout)
    return ids, values, options, tokens[0]


def _changed(rng: random.Random, page: tuple[Any, ...]) -> tuple[list[Any], int]:
    """The run page's control values with one control changed, and which."""
    ids, values, options, _tokens = page
    values = list(values)
    choices = [i for i, cid in enumerate(ids) if cid["field"] in _CHANGES and options[i]]
    k = rng.choice(choices)
    opts = [o["value"] if isinstance(o, dict) else o for o in options[k]]
    if isinstance(values[k], list):
        values[k] = [rng.choice(opts)]
    else:
        values[k] = rng.choice([o for o in opts if o != values[k]] or opts)
    return values, k


def _outputs(dep: dict[str, Any]) -> list[dict[str, str]]:
    outs = dep["output"].strip(".").split("...")
    return [dict(zip(("id", "property"), o.split(".", 1), strict=True)) for o in outs]


def _change(
    dep: dict[str, Any], page: tuple[Any, ...], values: list[Any], k: int, search: str
) -> dict[str, Any]:
    """The main chart's callback request for the control values `values` (control `k` changed)."""
    ids, _values, _options, tokens = page
    return {
        "output": dep["output"],
        "outputs": _outputs(dep),
        "inputs": [
            [{"id": i, "property": "value", "value": v} for i, v in zip(ids, values, strict=True)]
        ],
        "state": [
            [{"id": i, "property": "id", "value": i} for i in ids],
            {"id": "location", "property": "search", "value": search},
            {"id": "trace-tokens", "property": "data", "value": tokens},
        ],
        "changedPropIds": [json.dumps(ids[k], **_KEY) + ".value"],
    }


def _store(layout: Any, store_id: str) -> Any:
    """The `data` of the store `store_id` in a layout's JSON."""
    if isinstance(layout, dict):
        props = layout.get("props")
        if isinstance(props, dict) and props.get("id") == store_id:
            return props.get("data")
        found = (_store(v, store_id) for v in layout.values())
    elif isinstance(layout, list):
        found = (_store(v, store_id) for v in layout)
    else:
        return None
    return next((f for f in found if f is not None), None)


def _second(
    dep: dict[str, Any], page: tuple[Any, ...], values: list[Any], k: int | None, built: Any
) -> dict[str, Any]:
    """The second chart's callback request: once the first chart is drawn (`k` None:
    second-wanted set, a WebGL second chart) or for a change of control `k`; `built` is the
    second-tokens store."""
    ids = page[0]
    changed = "second-wanted.data" if k is None else json.dumps(ids[k], **_KEY) + ".value"
    return {
        "output": dep["output"],
        "outputs": _outputs(dep),
        "inputs": [
            [{"id": i, "property": "value", "value": v} for i, v in zip(ids, values, strict=True)],
            {"id": "second-wanted", "property": "data", "value": 1},
        ],
        "state": [
            [{"id": i, "property": "id", "value": i} for i in ids],
            {"id": "second-tokens", "property": "data", "value": built},
        ],
        "changedPropIds": [changed],
    }


async def _get(
    client: httpx.AsyncClient, kind: str, url: str, out: dict[str, Any]
) -> httpx.Response | None:
    headers = {"X-Load-Kind": kind}
    t0 = time.perf_counter()
    try:
        resp = await client.get(url, headers=headers)
        dt = time.perf_counter() - t0
        out["samples"].append([kind, dt, resp.status_code])
        if resp.status_code != 200 or not resp.content:
            out["errors"].append(f"{kind} {url}: HTTP {resp.status_code}")
        return resp
    except httpx.HTTPError as exc:
        out["errors"].append(f"{kind} {url}: {type(exc).__name__}: {exc}")
        return None


async def _post(
    client: httpx.AsyncClient, kind: str, url: str, body: Any, out: dict[str, Any]
) -> httpx.Response | None:
    t0 = time.perf_counter()
    try:
        resp = await client.post(url, json=body, headers={"X-Load-Kind": kind})
        out["samples"].append([kind, time.perf_counter() - t0, resp.status_code])
        # 204: the change needed no new output (Dash's no_update); anything else must be 200.
        if resp.status_code not in (200, 204):
            out["errors"].append(f"{kind} {url}: HTTP {resp.status_code} {resp.text[:300]}")
        return resp
    except httpx.HTTPError as exc:
        out["errors"].append(f"{kind} {url}: {type(exc).__name__}: {exc}")
        return None


async def _user(
    i: int, spec: dict[str, Any], out: dict[str, Any], deadline: float, client: httpx.AsyncClient
) -> None:
    rng = random.Random(spec["seed"] * 1000 + i)
    lo, hi = spec["think"]
    pages: dict[str, tuple[Any, ...]] = {}
    known: dict[str, tuple[Any, ...]] = out["controls"]  # a run page's controls, parsed once
    await asyncio.sleep(rng.uniform(0, 2.0))
    await _get(client, "index_html", "/", out)
    await _get(client, "index", layout_url("/"), out)
    if "deps" not in out:
        out["deps"] = (await client.get("/_dash-dependencies")).json()
    dep = next(d for d in out["deps"] if "main-chart.figure" in d["output"])
    dep2 = next(d for d in out["deps"] if "second-figure.data" in d["output"])
    built: dict[str, Any] = out["second"]  # a run's second-tokens store, as first drawn
    while time.monotonic() < deadline:
        await asyncio.sleep(rng.uniform(lo, hi))
        if time.monotonic() >= deadline:
            break
        roll = rng.random()
        # A control is changed on a run page the user has open.
        opened = roll >= 0.30 and roll < 0.75 and bool(pages)
        run = rng.choice(sorted(pages) if opened else spec["runs"])
        page = f"/inference?unofficialRun={quote(run)}"
        if roll < 0.30 or (roll < 0.75 and run not in pages):
            await _get(client, "page_html", page, out)
            resp = await _get(client, "first_render", layout_url(page), out)
            if resp is not None and resp.status_code == 200:
                # Parsing a 1,000-point layout blocks this process's event loop (and so every
                # other user's clock) for tens of ms: each run's default controls are parsed once.
                if run not in known:
                    layout = resp.json()
                    known[run] = _controls(layout)
                    if (tokens := _store(layout, "second-tokens")) is not None:
                        built[run] = tokens
                pages[run] = known[run]
                # An SVG second chart came with the layout (its tokens in its store); a WebGL
                # one is asked for once the first chart is drawn.
                if run not in built:
                    body = _second(dep2, pages[run], list(pages[run][1]), None, None)
                    got = await _post(client, "second_chart", "/_dash-update-component", body, out)
                    if got is not None and got.status_code == 200:
                        built[run] = got.json()["response"]["second-tokens"]["data"]
        elif roll < 0.75:
            # One control change: both charts' callbacks, posted together; the user has both
            # charts updated when the later one answers.
            values, k = _changed(rng, pages[run])
            search = "?" + page.split("?", 1)[1]
            t0 = time.perf_counter()
            await asyncio.gather(
                _post(
                    client, "filter_change", "/_dash-update-component",
                    _change(dep, pages[run], values, k, search), out,
                ),
                _post(
                    client, "filter_change_second", "/_dash-update-component",
                    _second(dep2, pages[run], values, k, built.get(run)), out,
                ),
            )  # fmt: skip
            out["samples"].append(["filter_change_both", time.perf_counter() - t0, 200])
        elif roll < 0.85:
            await _get(client, "export", f"/export/points.csv?unofficialRun={quote(run)}", out)
        elif roll < 0.95:
            await _get(client, "index", layout_url("/"), out)
        else:
            a, b = spec["compare"]
            page = f"/compare?base={quote(a)}&candidate={quote(b)}"
            await _get(client, "compare", layout_url(page), out)


async def _lag(out: dict[str, Any], deadline: float) -> None:
    """How late this process's event loop wakes (its own CPU use or a loaded machine delays
    every user's clock by as much): a 20 ms sleep, measured."""
    while time.monotonic() < deadline:
        t0 = time.perf_counter()
        await asyncio.sleep(0.02)
        out["loop_lag"].append(time.perf_counter() - t0 - 0.02)


async def _main(spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "samples": [],
        "errors": [],
        "controls": {},
        "second": {},
        "loop_lag": [],
    }
    deadline = time.monotonic() + spec["seconds"]
    # One connection pool for every user (a connection each, as browsers keep theirs); one
    # client, so the load generator does not spend its CPU building 50 of them.
    limits = httpx.Limits(max_connections=spec["users"], max_keepalive_connections=spec["users"])
    async with httpx.AsyncClient(base_url=spec["base"], timeout=30.0, limits=limits) as client:
        await asyncio.gather(
            _lag(out, deadline),
            *(_user(i, spec, out, deadline, client) for i in range(spec["users"])),
        )
    out.pop("controls")
    out.pop("second")
    out.pop("deps", None)
    return out


if __name__ == "__main__":
    result = asyncio.run(_main(json.loads(sys.argv[1])))
    print(json.dumps(result))
