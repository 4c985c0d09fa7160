"""Team scale (issue 26, item 5): the pages, an ingest and the server's memory on a whole history.

The store is `benchmarks.synth.history_store`: an InferenceX-like history (3,000 runs of 334
points, 1,002,000 points over 730 days; 1/20 of it with `--quick`), generated once and cached
on disk by its parameters, then copied (data files hard-linked) into the run's scratch folder so
the ingests measured here never change the cache.

Pages are measured in a child process of their own (`python -m benchmarks.suite_team pages
STORE`), so its resident memory is the server's alone, through the Flask test client: each
sample is the server time of the page's HTML, `/_dash-layout` and `/_dash-dependencies`; the
run page's sample also counts the tables and second-chart callbacks the page fires once drawn
(`benchmarks.suite_dashboard.Page.first_render`). Cold: a page not seen before (another run,
candidate or configuration; for the runs index, the first request after a commit to the store,
which every ingest makes). Warm: the same page again. The ingest is `paretolens ingest` of a
500-file run as a subprocess (start-up included), each into a new run id of the history.

Under load: `paretolens serve --workers 2` (gunicorn, two processes of 8 threads) over the
history, and the load suite's 50 simulated users (`tests/reliability/_load_client.py`, the same
mix: index, run pages, filter changes, CSV exports, a compare page) for 30 s (15 s with `--quick`)
on runs of the history, in two rounds against a server started afresh each time; the filter
change's target is judged on the client's latency, over both rounds' samples.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from benchmarks.config import Config
from benchmarks.process import free_port
from benchmarks.report import Anchor, Check, Figure, Section
from benchmarks.synth import (
    HistorySpec,
    copy_store,
    dir_size,
    history_store,
    runs_spec,
    synth_points,
    write_aggregate_dir,
)
from benchmarks.timing import Samples, interleaved, timed
from ingest.contract.schema import RunCol

PAGE_TARGET_S = 0.300
INGEST_TARGET_S = 1.0
STARTUP_TARGET_S = 0.3
RSS_TARGET = int(1.5 * 2**30)
SAMPLES = 10  # cold samples per page (each a page not seen before); warm samples the same
DISTINCT_PAGES = 50
LOAD_WORKERS = 2
LOAD_RUNS = 6  # run pages the simulated users open (recent runs of the history)
# Rounds of the 50 users, each against a server started afresh: a p95 of one 30 s round rests on
# its 3-4 slowest of about 75 filter changes; the figure is the p95 of the rounds' samples.
LOAD_ROUNDS = 2


def history_spec(cfg: Config) -> HistorySpec:
    """The full history, or 1/20 of it in quick mode."""
    return HistorySpec().scaled(20) if cfg.quick else HistorySpec()


# ---- the child: pages and memory ---------------------------------------------------------------


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def late_prs(catalog: pl.DataFrame) -> list[str]:
    """The compare candidates of a history's runs catalog: the PR-branch runs of its later half
    (main's runs came before them), oldest first."""
    late = catalog.sort(RunCol.CREATED_AT).slice(catalog.height // 2)
    return late.filter(pl.col(RunCol.BRANCH) != "main").get_column(RunCol.RUN_ID).to_list()


def page_seconds(client: Any, path: str) -> tuple[float, int]:
    """One page as a browser asks for it (its HTML, `/_dash-layout`, `/_dash-dependencies`)
    through a Flask test client: the server seconds and the layout's bytes.

    Raises:
        RuntimeError: a request answered other than 200.
    """
    from dashboard.app import layout_url

    t = time.perf_counter()
    size = 0
    for url in (path, layout_url(path), "/_dash-dependencies"):
        resp = client.get(url)
        if resp.status_code != 200:
            raise RuntimeError(f"GET {url} for {path}: HTTP {resp.status_code}")
        size = len(resp.data) if url.startswith("/_dash-layout") else size
    return time.perf_counter() - t, size


def measure_pages(root: Path) -> dict[str, Any]:
    """Cold and warm server seconds of the four pages, and resident memory (run in a child)."""
    from benchmarks.suite_dashboard import Page
    from dashboard.app import layout_url
    from ingest.contract.col import Col
    from ingest.contract.schema import RunCol
    from ingest.store import Store
    from views import urls
    from views.query.state import CompareView, HistoryView

    page = Page(root)
    rss_start = _status("VmRSS")
    client = page.client
    seen: set[str] = set()

    def get(path: str) -> float:
        seen.add(path)
        return page_seconds(client, path)[0]

    store = Store(root)
    catalog = store.runs().sort(RunCol.CREATED_AT)
    ids = catalog.get_column(RunCol.RUN_ID).to_list()
    prs = late_prs(catalog)
    step = max(1, len(ids) // (4 * SAMPLES))
    run_pages = ids[1::step][: 2 * SAMPLES]
    out: dict[str, Any] = {}

    # Runs index: cold is the first request after a commit (a catalog row written again).
    touch = catalog.row(0, named=True)

    def index_cold(_i: int) -> float:
        store.upsert_run({RunCol.RUN_ID: touch[RunCol.RUN_ID], RunCol.TITLE: touch[RunCol.TITLE]})
        return get("/")

    out["index"] = _cold_warm(index_cold, lambda: get("/"))
    out["index_version"] = store.version()

    def run_cold(i: int) -> float:
        seen.add(urls.runs(run_pages[i]))
        return page.first_render(run_pages[i])["total"]

    out["run"] = _cold_warm(run_cold, lambda: page.first_render(run_pages[0])["total"])

    def compare_path(rid: str) -> str:
        return urls.compare(CompareView(base="main", candidate=rid))

    out["compare"] = _cold_warm(
        lambda i: get(compare_path(prs[i])), lambda: get(compare_path(prs[0]))
    )
    arms: list[str] = []
    for rid in ids[len(ids) // 3 :: max(1, len(ids) // (3 * SAMPLES))]:
        arm = store.points([rid]).get_column(Col.ARM_ID).sort().to_list()[0]
        if arm not in arms:
            arms.append(arm)

    def history_path(arm: str) -> str:
        return urls.history(HistoryView(arm=(arm,), at=30.0))

    out["history"] = _cold_warm(
        lambda i: get(history_path(arms[i % len(arms)])), lambda: get(history_path(arms[0]))
    )
    # What the measured pages showed: the history's rows, the compare page's baseline.
    shown = client.get(layout_url(history_path(arms[0])))
    if b"no run in the store has arm" in shown.data or b"Give the arms" in shown.data:
        raise RuntimeError(f"the history page of {arms[0]} showed no run")
    out["history_rows"] = shown.data.count(b"unofficialRun=")
    shown = client.get(layout_url(compare_path(prs[0])))
    if b"main baseline: the latest main-branch result" not in shown.data:
        raise RuntimeError(f"the compare page of {prs[0]} found no main baseline")
    # More distinct run pages until DISTINCT_PAGES pages were served, then the memory.
    more = iter(ids[::-1])
    while len(seen) < DISTINCT_PAGES:
        rid = next(more)
        if urls.runs(rid) not in seen:
            seen.add(urls.runs(rid))
            page.first_render(rid)
    out["pages"] = len(seen)
    out["rss_start"] = rss_start
    out["rss"] = _status("VmRSS")
    out["rss_peak"] = _status("VmHWM")
    out["runs"] = len(ids)
    return out


def _cold_warm(cold: Callable[[int], float], warm: Callable[[], float]) -> dict[str, list[float]]:
    got = {"cold": [cold(i) for i in range(SAMPLES)]}
    warm()
    got["warm"] = [warm() for _ in range(SAMPLES)]
    return got


# ---- 50 users against `serve --workers 2` -------------------------------------------------------


def _load_runs(store: Path) -> tuple[list[str], list[str]]:
    """(run pages the users open: recent runs, PR and main; the compare pair)."""
    from ingest.store import Store

    catalog = Store(store).runs().sort(RunCol.CREATED_AT, descending=True)
    runs = catalog.get_column(RunCol.RUN_ID).to_list()[:LOAD_RUNS]
    return runs, runs[1:3]


def measure_load(store: Path, seconds: float) -> dict[str, Any]:
    """Serve the history with `paretolens serve --workers 2`, warm both processes on the pages
    the users open, run the 50 users, stop the server; the client's samples and load average."""
    import signal
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    from benchmarks.suite_load import drive_users
    from dashboard.app import layout_url
    from views import urls
    from views.query.state import CompareView

    runs, pair = _load_runs(store)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    script = str(Path(sys.executable).with_name("paretolens"))
    cmd = [script, "serve", "--workers", str(LOAD_WORKERS), "--threads", "8"]
    cmd += ["--store", str(store), "--port", str(port)]
    env = {k: v for k, v in os.environ.items() if k != "PARETOLENS_TOKEN"}
    log = store.parent / "serve.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            cmd, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        t0 = time.perf_counter()
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"serve --workers stopped: {log.read_text()[-1500:]}")
            try:
                with urllib.request.urlopen(base + "/", timeout=10):
                    break
            except OSError:
                if time.perf_counter() - t0 > 300:
                    raise RuntimeError("serve --workers did not answer within 300 s") from None
                time.sleep(0.5)
        started = time.perf_counter() - t0
        # The pages the users open: each run page's HTML and layout, the index, the compare page.
        pages = [u for r in runs for u in (urls.runs(r), layout_url(urls.runs(r)))]
        pages += [
            layout_url("/"),
            layout_url(urls.compare(CompareView(base=pair[0], candidate=pair[1]))),
        ]

        def fetch(url: str) -> None:
            with urllib.request.urlopen(base + url, timeout=120) as resp:
                resp.read()

        # Each page several times, four at once, so that both processes have served it.
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(fetch, pages * 6))
        # Then until the processes are idle: each app's warm-up thread (the main baseline's rows,
        # the static files compressed) has finished, so the users meet a server that is running.
        quiet = wait_idle(proc.pid)
        result, load = drive_users(base, runs, pair, seconds)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return {**result, "load": load, "runs": runs, "pair": pair, "started": started, "quiet": quiet}


def wait_idle(session: int, window: float = 1.0, idle: float = 0.05, limit: float = 120.0) -> float:
    """Wait until the processes of a session (a server and its workers) use under `idle` of a
    CPU over `window` seconds (at most `limit` seconds); the seconds waited."""
    tick = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:
        total = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session:  # the session id (field 6 of /proc/PID/stat)
                total += int(fields[11]) + int(fields[12])  # utime + stime
        return total / tick

    t0 = time.perf_counter()
    before = cpu()
    while time.perf_counter() - t0 < limit:
        time.sleep(window)
        now = cpu()
        if now - before < idle * window:
            break
        before = now
    return time.perf_counter() - t0


def pooled(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Rounds of `measure_load` (each against a server started afresh) as one: their samples,
    errors and load averages together, each round's start-up and idle wait, and each round's
    p95 of every request kind."""
    out: dict[str, Any] = {k: [] for k in ("samples", "errors", "load", "started", "quiet")}
    out["p95s"] = []
    for got in rounds:
        out["samples"] += got["samples"]
        out["errors"] += got["errors"]
        out["load"] += got["load"]
        out["started"].append(got["started"])
        out["quiet"].append(got["quiet"])
        kinds: dict[str, list[float]] = {}
        for kind, dt, _status in got["samples"]:
            kinds.setdefault(kind, []).append(dt)
        out["p95s"].append({k: Samples(v).p95() for k, v in kinds.items()})
    out["runs"], out["pair"] = rounds[0]["runs"], rounds[0]["pair"]
    return out


def _load_figures(got: dict[str, Any], seconds: float, cmd: str) -> list[Figure]:
    from benchmarks.suite_load import TARGETS, USERS

    by_kind: dict[str, list[float]] = {}
    for kind, dt, _status in got["samples"]:
        by_kind.setdefault(kind, []).append(dt)
    load = got["load"] or [0.0]
    every = [dt for _k, dt, _s in got["samples"]]
    rounds = len(got["p95s"])
    started = ", ".join(f"{v:.0f}" for v in got["started"])
    quiet = ", ".join(f"{v:.0f}" for v in got["quiet"])
    note = (
        f"{rounds} rounds of {USERS} users for {seconds:.0f} s, each against `paretolens serve "
        f"--workers {LOAD_WORKERS} --threads 8` started afresh (gunicorn; {started} s to answer "
        "after start; both processes warmed on the pages the users open (each run page's HTML and "
        f"layout, the index, the compare page), then idle after {quiet} s more), the samples of "
        "the rounds together; over the whole history; run pages "
        f"{', '.join(f'`{r}`' for r in got['runs'])}, compare `{got['pair'][0]}` against "
        f"`{got['pair'][1]}`. {len(every)} requests, {len(got['errors'])} errors; load average "
        f"(1 min) median {sorted(load)[len(load) // 2]:.2f} during the run (max {max(load):.2f}). "
        + ", ".join(
            f"{k} p95 {Samples(v).p95() * 1000:.0f} ms (n {len(v)})"
            for k, v in sorted(by_kind.items())
        )
        + "."
    )
    note += (
        " Each round's p95: "
        + "; ".join(
            f"filter change {r.get('filter_change_both', 0.0) * 1000:.0f} ms, first render "
            f"{r.get('first_render', 0.0) * 1000:.0f} ms"
            for r in got["p95s"]
        )
        + "."
    )
    if got["errors"]:
        note += " Errors (first 3): " + "; ".join(got["errors"][:3])
    out = []
    for kind, name, timed_as in (
        ("filter_change", "filter change", "filter_change_both"),
        ("first_render", "run page first render", "first_render"),
    ):
        vals = by_kind.get(timed_as)
        if not vals:
            continue
        target = TARGETS[kind]
        got_s = Samples(vals)
        p95 = got_s.p95()
        out.append(
            Figure(
                name=f"Team scale: 50 users, `serve --workers {LOAD_WORKERS}`: {name} "
                "(client latency)",
                samples=got_s,
                stat="p95",
                target=f"<= {target * 1000:.0f} ms at p95",
                checks=[Check(f"p95 {p95 * 1000:.0f} ms <= {target * 1000:.0f} ms", p95 <= target)],
                notes=note,
                command=cmd,
            )
        )
    return out


# ---- the parent: the store, the ingest, the figures ---------------------------------------------


def _ingest_samples(cfg: Config, store: Path, files: Path) -> tuple[Samples, Samples, Samples]:
    """(ingest into the history, the same into an empty store, `paretolens --help`), interleaved."""
    script = str(Path(sys.executable).with_name("paretolens"))
    n = {"i": 0}

    def into(root: Path) -> Callable[[], None]:
        def go() -> None:
            n["i"] += 1
            cmd = [script, "ingest", str(files), "--store", str(root), "--run-id", f"team-{n['i']}"]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()[-400:]}")

        return go

    def help_() -> None:
        subprocess.run([script, "--help"], check=True, capture_output=True)

    got = interleaved(
        {
            "history": into(store),
            "empty": into(cfg.workdir / "team" / "empty"),
            "help": help_,
        },
        cfg.runs,
    )
    return got["history"], got["empty"], got["help"]


def compile_bytecode() -> float:
    """Compile the environment's and the project's modules to bytecode, as an install does (pip
    by default, `uv sync --compile-bytecode`); returns the seconds it took. Without it, a
    process started with PYTHONDONTWRITEBYTECODE set (as on this machine) compiles every module
    it imports from source, about 2 s of an ingest's start-up."""
    import compileall
    import sysconfig

    here = Path(__file__).resolve().parents[1]
    dirs = [Path(sysconfig.get_paths()["purelib"])]
    dirs += [here / d for d in ("ingest", "analysis", "views", "dashboard", "paretolens", "runner")]
    t = time.perf_counter()
    for d in dirs:
        compileall.compile_dir(d, quiet=1, workers=0)
    return time.perf_counter() - t


def _child_pages(store: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.suite_team", "pages", str(store)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the pages child failed: {done.stderr.strip()[-1500:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _read_all(root: Path) -> Samples:
    """Reading every point of the store (the anchor a page must stay far below)."""
    from ingest.store import Store

    return Samples([timed(lambda: Store(root).points())[0] for _ in range(3)])


def run(cfg: Config) -> Section:
    """Measure the team-scale figures."""
    spec = history_spec(cfg)
    gen_s, (cached, run_ids) = timed(lambda: history_store(spec))
    store = copy_store(cached, cfg.workdir / "team" / "store")
    size = dir_size(cached)
    section = Section(
        f"Team scale ({spec.n_points:,} points in {len(run_ids):,} runs over {spec.days} days)"
    )
    section.notes.append(
        f"Store: `benchmarks.synth.history_store({spec!r})`, {size / 2**20:,.0f} MiB on disk "
        f"(found or generated in {gen_s:.0f} s; cached under `{cached.parent}` by its key "
        f"`{spec.key()}`). Each page figure: {SAMPLES} samples; cold is a page not seen "
        "before (the runs index: the first request after a commit), warm the same page again."
    )
    pages = _child_pages(store)
    whole = _read_all(store)
    cmd = cfg.command("team")
    names = {
        "index": "Runs index `/`",
        "run": "Run page first render `/inference?unofficialRun=<id>` (with its data callbacks)",
        "compare": "`/compare?base=main&candidate=<PR run>`",
        "history": "`/history?arm=<one configuration>`",
    }
    for key, name in names.items():
        for temp in ("cold", "warm"):
            got = Samples(pages[key][temp])
            p95 = got.p95()
            section.figures.append(
                Figure(
                    name=f"Team scale: {name}, {temp} (server time)",
                    samples=got,
                    stat="p95",
                    target=f"<= {PAGE_TARGET_S * 1000:.0f} ms at p95",
                    checks=[
                        Check(
                            f"p95 {p95 * 1000:.0f} ms <= {PAGE_TARGET_S * 1000:.0f} ms "
                            f"({p95 / PAGE_TARGET_S:.2f}x the target)",
                            p95 <= PAGE_TARGET_S,
                        )
                    ],
                    anchors=[Anchor("reading every point of the store (`Store.points()`)", whole)],
                    command=cmd,
                )
            )
    rss = pages["rss"]
    section.figures.append(
        Figure(
            name=f"Team scale: server resident memory after {pages['pages']} different pages",
            samples=Samples([float(rss)]),
            unit="MiB",
            target=f"<= {RSS_TARGET / 2**30:.1f} GiB",
            checks=[
                Check(
                    f"{rss / 2**20:,.0f} MiB <= {RSS_TARGET / 2**20:,.0f} MiB "
                    f"({rss / RSS_TARGET:.2f}x the target)",
                    rss <= RSS_TARGET,
                )
            ],
            anchors=[
                Anchor(
                    "the same process once the app was built and warmed",
                    Samples([float(pages["rss_start"])]),
                )
            ],
            notes=f"Peak resident memory of the process (VmHWM): {pages['rss_peak'] / 2**20:,.0f} MiB.",
            command=cmd,
        )
    )
    seconds = 15.0 if cfg.quick else 30.0
    try:
        rounds = [measure_load(store, seconds) for _ in range(LOAD_ROUNDS)]
        section.figures += _load_figures(pooled(rounds), seconds, cmd)
    except Exception as exc:  # the other figures stand without this one
        section.notes.append(f"50 users with `serve --workers {LOAD_WORKERS}`: failed ({exc}).")
    n = cfg.run_points
    files = cfg.workdir / "team" / "run"
    write_aggregate_dir(synth_points(runs_spec(n, points_per_run=n, seed=7)), files)
    compiled = compile_bytecode()
    ours, empty, help_ = _ingest_samples(cfg, store, files)
    section.figures.append(
        Figure(
            name=f"Team scale: `paretolens ingest` of a {n}-file run into the history (a new process)",
            samples=ours,
            unit="s",
            target=f"<= {INGEST_TARGET_S:.0f} s including the command's start-up",
            checks=[
                Check(
                    f"median {ours.median:.3f} s <= {INGEST_TARGET_S:.0f} s "
                    f"({ours.median / INGEST_TARGET_S:.2f}x the target)",
                    ours.median <= INGEST_TARGET_S,
                )
            ],
            anchors=[
                Anchor("the same command into an empty store", empty),
                Anchor("`paretolens --help` (the start-up alone)", help_),
            ],
            notes=(
                "Modules compiled to bytecode first, as an install does "
                f"({compiled:.0f} s, nothing when already compiled): this machine sets "
                "PYTHONDONTWRITEBYTECODE, and without bytecode every process compiles what it "
                "imports from source."
            ),
            command=cmd,
        )
    )
    section.figures.append(
        Figure(
            name="Team scale: CLI start-up (`paretolens --help`, a new process)",
            samples=help_,
            unit="s",
            target=f"<= {STARTUP_TARGET_S} s",
            checks=[
                Check(
                    f"median {help_.median:.3f} s <= {STARTUP_TARGET_S} s "
                    f"({help_.median / STARTUP_TARGET_S:.2f}x the target)",
                    help_.median <= STARTUP_TARGET_S,
                )
            ],
            command=cmd,
        )
    )
    return section


def main(argv: list[str]) -> None:
    """`pages STORE`: measure the pages in this process and print one JSON object."""
    if argv[:1] != ["pages"] or len(argv) != 2:
        raise SystemExit("usage: python -m benchmarks.suite_team pages STORE")
    print(json.dumps(measure_pages(Path(argv[1]))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
