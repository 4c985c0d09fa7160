"""The dashboard under 50 concurrent users, end to end on loopback.

The app is served by waitress (8 threads, as `paretolens serve` runs it) in this process on a free
127.0.0.1 port, over a store holding a 1,000-point run (synthetic, `benchmarks/synth.py`) and
three real sweeps from `tests/fixtures` (30-50 points each). 50 simulated users in another
process (`tests/reliability/_load_client.py`: asyncio + httpx, think time 2-10 s) open the
index, open run pages (the page HTML, then `/_dash-layout`, which carries the first chart: the
first render; then the second chart's callback), change a control on an open page (both charts'
callbacks, posted together as Dash's renderer posts them: a filter change), download the points
CSV, reopen the index or open the compare page.

Bounded: 30 s of load (15 s with --quick), at most a few hundred requests, loopback only.

Reported per request kind: the latency the client saw (p50/p95/p99: what a user waits, including
queueing for the server's threads, the GIL and the machine's CPUs), the server's wall time and
the CPU time of the request's thread (what the request itself costs), and errors. The targets
(first render <= 150 ms, filter change <= 100 ms at p95) are judged on the client's latency.
The machine's load average is sampled every half second during the run.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from benchmarks.config import Config
from benchmarks.report import Check, Figure, Section
from benchmarks.synth import runs_spec, synth_points, write_store
from benchmarks.timing import Samples

REPO = Path(__file__).resolve().parents[1]
USERS = 50
THINK = (2.0, 10.0)
THREADS = 8
BIG_POINTS = 1_000
TARGETS = {"first_render": 0.150, "filter_change": 0.100}
FIXTURE_RUNS = {
    "minimax-m2.5": "tests/fixtures/inferencex/bench_serving_random/minimax-m2.5",
    "qwen3.5": "tests/fixtures/inferencex/bench_serving_random/qwen3.5",
    "glm-5": "tests/fixtures/inferencex/bench_serving_random/glm-5",
}


def _runqueue_ns() -> int:
    """Nanoseconds this thread has spent runnable but waiting for a CPU (Linux schedstat)."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as fh:
            return int(fh.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


class Timing:
    """WSGI middleware: (kind, wall, thread CPU, run-queue wait) seconds of every request.

    The run-queue wait is the time the request's thread was ready to run while every CPU was
    busy (other processes on the machine, or this process's other threads); wall - CPU - run
    queue is time the thread slept: waiting for the GIL, mostly (the store is local).
    """

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app
        self.samples: list[tuple[str, float, float, float]] = []
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        t0, c0, q0 = time.perf_counter(), time.thread_time(), _runqueue_ns()
        body = self.app(environ, start_response)
        try:
            data = b"".join(body)
        finally:
            close = getattr(body, "close", None)
            if close:
                close()
        wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
        queued = (_runqueue_ns() - q0) / 1e9
        with self._lock:
            kind = environ.get("HTTP_X_LOAD_KIND", "other")
            self.samples.append((kind, wall, cpu, queued))
        return [data]


def build_store(root: Path) -> tuple[str, list[str]]:
    """The store: a 1,000-point run and the fixture sweeps. Returns (big run id, every run id)."""
    from ingest.pipeline import ingest_paths
    from ingest.store import Store

    spec = runs_spec(BIG_POINTS, points_per_run=BIG_POINTS, seed=21)
    (big,) = write_store(synth_points(spec), root)
    store = Store(root)
    for rid, rel in FIXTURE_RUNS.items():
        ingest_paths([REPO / rel], store, run_id=rid)
    return big, [big, *FIXTURE_RUNS]


def _q(values: list[float], q: int) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _ms(v: float) -> str:
    return f"{v * 1000:.0f}" if v >= 0.1 else f"{v * 1000:.1f}"


def measure(root: Path, runs: list[str], seconds: float) -> dict[str, Any]:
    """Serve the store, run the users, and return every sample with the load average."""
    from waitress.server import create_server

    from dashboard.app import create_app, layout_url

    app = create_app(root)
    timing = Timing(app.server.wsgi_app)
    app.server.wsgi_app = timing
    server = create_server(app.server, host="127.0.0.1", port=0, threads=THREADS, ident="bench")
    thread = threading.Thread(target=server.run, name="bench-load", daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.effective_port}"
    try:
        import httpx

        with httpx.Client(base_url=base, timeout=60) as c:  # warm-up: each page once
            for run in runs:
                c.get(layout_url(f"/inference?unofficialRun={run}"))
            c.get(layout_url("/"))
        timing.samples.clear()

        t0 = time.perf_counter()
        result, load = drive_users(base, runs, [runs[1], runs[2]], seconds)
        wall = time.perf_counter() - t0
    finally:
        server.close()
        thread.join(timeout=10)
    return {**result, "server": timing.samples, "load": load, "wall": wall}


def drive_users(
    base: str, runs: list[str], compare: list[str], seconds: float
) -> tuple[dict[str, Any], list[float]]:
    """The load suite's simulated users (`tests/reliability/_load_client.py`: USERS users with
    THINK seconds between requests, seed 1) against the server at `base` for `seconds`, on the
    run pages of `runs` and the compare page of the pair `compare`: the client's result and the
    machine's load average sampled every half second meanwhile."""
    load: list[float] = []
    stop = threading.Event()

    def sample_load() -> None:
        while not stop.is_set():
            load.append(os.getloadavg()[0])
            stop.wait(0.5)

    sampler = threading.Thread(target=sample_load, name="loadavg", daemon=True)
    sampler.start()
    spec = {
        "base": base,
        "users": USERS,
        "seconds": seconds,
        "think": list(THINK),
        "seed": 1,
        "runs": runs,
        "compare": compare,
    }
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tests.reliability._load_client", json.dumps(spec)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=seconds + 180,
            check=False,
        )
    finally:
        stop.set()
    if proc.returncode != 0:
        raise RuntimeError(f"load client failed: {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result, load


def table(got: dict[str, Any]) -> tuple[list[str], dict[str, dict[str, float]]]:
    """The per-kind markdown table and its numbers."""
    client: dict[str, list[float]] = {}
    for kind, dt, _status in got["samples"]:
        client.setdefault(kind, []).append(dt)
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    runq: dict[str, list[float]] = {}
    gil: dict[str, list[float]] = {}
    for kind, w, c, q in got["server"]:
        wall.setdefault(kind, []).append(w)
        cpu.setdefault(kind, []).append(c)
        runq.setdefault(kind, []).append(q)
        gil.setdefault(kind, []).append(max(0.0, w - c - q))
    lines = [
        "| request | n | client p50 | client p95 | client p99 | server wall p50 | "
        "server wall p95 | CPU p50 | CPU p95 | run-queue wait mean | other wait mean | "
        "outside the handler mean | target p95 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    numbers: dict[str, dict[str, float]] = {}
    for kind in sorted(client):
        cl = client[kind]
        sw, sc = wall.get(kind, [0.0]), cpu.get(kind, [0.0])
        sq, sg = runq.get(kind, [0.0]), gil.get(kind, [0.0])
        row = {
            "n": len(cl),
            "client_p50": _q(cl, 50),
            "client_p95": _q(cl, 95),
            "client_p99": _q(cl, 99),
            "server_wall_p50": _q(sw, 50),
            "server_wall_p95": _q(sw, 95),
            "cpu_p50": _q(sc, 50),
            "cpu_p95": _q(sc, 95),
            "runq_mean": statistics.fmean(sq),
            "other_mean": statistics.fmean(sg),
            "wall_mean": statistics.fmean(sw),
            "outside_mean": max(0.0, statistics.fmean(cl) - statistics.fmean(sw)),
        }
        numbers[kind] = row
        target = f"<= {TARGETS[kind] * 1000:.0f} ms" if kind in TARGETS else ""
        lines.append(
            f"| {kind} | {len(cl)} | {_ms(row['client_p50'])} | {_ms(row['client_p95'])} | "
            f"{_ms(row['client_p99'])} | {_ms(row['server_wall_p50'])} | "
            f"{_ms(row['server_wall_p95'])} | {_ms(row['cpu_p50'])} | {_ms(row['cpu_p95'])} | "
            f"{_ms(row['runq_mean'])} | {_ms(row['other_mean'])} | "
            f"{_ms(row['outside_mean'])} | {target} |"
        )
    return lines, numbers


def run(cfg: Config) -> Section:
    """Measure the dashboard under the 50-user mix."""
    section = Section("Dashboard under 50 users (load)")
    root = cfg.workdir / "load" / "store"
    big, runs = build_store(root)
    seconds = 15.0 if cfg.quick else 30.0
    before = os.getloadavg()
    got = measure(root, runs, seconds)
    after = os.getloadavg()
    lines, numbers = table(got)
    load = got["load"] or [before[0]]
    errors = got["errors"]
    lag = got.get("loop_lag") or [0.0]
    everything = [dt for _k, dt, _s in got["samples"]]
    section.notes.append(
        f"{USERS} users for {seconds:.0f} s (think time {THINK[0]:.0f}-{THINK[1]:.0f} s) against "
        f"waitress with {THREADS} threads on 127.0.0.1; store: `{big}` ({BIG_POINTS:,} points, "
        f"synthetic) and {', '.join(f'`{r}`' for r in FIXTURE_RUNS)} (fixtures). "
        f"**{len(everything)} requests, {len(errors)} errors**; all requests: client p50 "
        f"{_ms(_q(everything, 50))} ms, p95 {_ms(_q(everything, 95))} ms, p99 "
        f"{_ms(_q(everything, 99))} ms. Load average (1 min) on {os.cpu_count()} CPUs: "
        f"{before[0]:.2f} before, {statistics.median(load):.2f} median during "
        f"(max {max(load):.2f}), {after[0]:.2f} after. The load generator's own delay (its "
        f"event loop waking late from 20 ms sleeps, part of every client latency): mean "
        f"{_ms(statistics.fmean(lag))} ms, p95 {_ms(_q(lag, 95))} ms. Times in ms; CPU is the "
        "request thread's CPU time; run-queue wait is the time it was ready to run while every "
        "CPU was busy; other wait is the rest of the server's wall time (waiting for the GIL); "
        "outside the handler is the client's mean latency less the server's mean wall time "
        "(waiting for a free server thread, waitress's I/O thread, the client's own loop)."
    )
    section.notes.append("\n".join(lines))
    if errors:
        section.notes.append("Errors (first 10):\n\n" + "\n".join(f"- {e}" for e in errors[:10]))
    # A filter change is two requests since the charts have a callback each: the user waits for
    # the later one (the client times both together, `filter_change_both`).
    for kind, name, timed in (
        ("first_render", "run page first render", "first_render"),
        ("filter_change", "filter change", "filter_change_both"),
    ):
        row = numbers.get(kind)
        if row is None:
            continue
        client = [dt for k, dt, _s in got["samples"] if k == timed]
        second = numbers.get("filter_change_second") if kind == "filter_change" else None
        both = (
            f" Both charts' callbacks, posted together, until the later answers; the main "
            f"chart's alone: client p95 {_ms(row['client_p95'])} ms, the second chart's: "
            f"client p95 {_ms(second['client_p95'])} ms, server CPU p95 {_ms(second['cpu_p95'])} ms."
            if second is not None
            else ""
        )
        target = TARGETS[kind]
        samples = Samples(client)
        p95 = samples.p95()
        section.figures.append(
            Figure(
                name=f"50 users: {name} (client latency, 1,000-point run in the store)",
                samples=samples,
                stat="p95",
                target=f"<= {target * 1000:.0f} ms at p95",
                checks=[Check(f"p95 {p95 * 1000:.0f} ms <= {target * 1000:.0f} ms", p95 <= target)],
                notes=(
                    f"{row['n']:.0f} requests; client p50 {_ms(row['client_p50'])} ms, p99 "
                    f"{_ms(row['client_p99'])} ms; server CPU p95 {_ms(row['cpu_p95'])} ms; "
                    f"load average {statistics.median(load):.2f} (median during the run).{both}"
                ),
                command=cfg.command("load"),
            )
        )
    try:
        section.notes.append("\n".join(profile(root, big)))
    except Exception as exc:  # the profile explains the figures; it must not lose them
        section.notes.append(f"Profile failed: {type(exc).__name__}: {exc}")
    return section


def profile(root: Path, big: str, calls: int = 20) -> list[str]:
    """Where a filter change and a first render of the 1,000-point run spend their CPU time:
    cProfile over `calls` of each in this process, the project's functions by cumulative time."""
    import cProfile
    import itertools
    import pstats

    from benchmarks.suite_dashboard import Page, filter_changes
    from dashboard.app import layout_url
    from views import urls

    page = Page(root)
    page.first_render(big)
    cyc = itertools.cycle(filter_changes(page, big))
    for _ in range(3):
        page.filter_change(big, next(cyc))
    out: list[str] = []
    layout = layout_url(urls.runs(big))
    jobs: dict[str, Callable[[], object]] = {
        "filter change (`RunCallbacks.on_controls` profiled, JSON-encoded; the CPU per call "
        "includes `on_second`, run beside it in a thread)": lambda: page.filter_change(
            big, next(cyc)
        ),
        "first render (`/_dash-layout` of the run page, warm analysis cache)": lambda: (
            page.client.get(layout)
        ),
    }
    for name, job in jobs.items():
        prof = cProfile.Profile(time.process_time)  # CPU time, whatever the machine's load
        c0 = time.process_time()
        prof.enable()
        for _ in range(calls):
            job()
        prof.disable()
        per_call = (time.process_time() - c0) / calls
        stats = pstats.Stats(prof)
        rows = []
        for (file, line, fn), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
            rel = file.replace(str(REPO) + "/", "")
            if rel.startswith(("dashboard/", "analysis/", "ingest/")) or fn in (
                "to_json_plotly",
                "collect",
            ):
                lib = rel.split("site-packages/", 1)[-1]
                label = f"`{lib}:{line} {fn}`"
                rows.append((ct / calls, label))
        rows.sort(reverse=True)
        out.append(
            f"**{name}**: {per_call * 1000:.0f} ms CPU per call under cProfile ({calls} calls; "
            "the profiler adds its own cost); cumulative CPU time per call of the heaviest "
            "functions:\n"
        )
        out.append("| function | ms per call |\n|---|---:|")
        out.extend(f"| {label} | {ms * 1000:.1f} |" for ms, label in rows[:12])
        out.append("")
    return out
