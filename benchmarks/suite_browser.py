"""The run page in headless Debian chromium: time to first point, to fully drawn, interactivity.

Measured as the InferenceX-app anchor was (docs/anchors.md): the production server (waitress,
`paretolens serve`) on loopback, a fresh browser with an empty profile per load, a 1440x1000
viewport, times read in the page from navigation start (`performance.now()`), median of 5 loads.
`benchmarks/probe.js` is injected before any page script and records when the first chart point
is drawn and when each chart's Plotly.react resolves (plus one frame). The server is warmed by
one visit per page first: the cold server cost is the server-time figure's business.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from benchmarks import anchor_page
from benchmarks.config import Config
from benchmarks.process import free_port, started
from benchmarks.report import Anchor, Check, Figure, Section
from benchmarks.synth import runs_spec, synth_points, write_anchor_dir, write_store
from benchmarks.timing import Samples
from ingest.contract.col import Col

PROBE = (Path(__file__).parent / "probe.js").read_text()
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1440,1000",
)
INFERENCEX_FIRST_POINT_MS = 936.0  # docs/anchors.md: InferenceX-app, same machine kind and browser
MAIN, SECOND = "main-chart", "second-chart"


@contextlib.contextmanager
def server(root: Path, code: Path | None = None) -> Iterator[str]:
    """`paretolens serve` (waitress) over a store, on a free loopback port, from `code` (another
    checkout, e.g. the code before a change) or this tree; yields its base URL."""
    port = free_port()
    cmd = [str(Path(sys.executable).with_name("paretolens"))]
    env = dict(os.environ)
    env.pop("PARETOLENS_TOKEN", None)
    if code is not None:
        env["PYTHONPATH"] = str(code)
        cmd = [sys.executable, "-m", "paretolens.cli"]
    base = f"http://127.0.0.1:{port}"

    def ready() -> None:
        with urllib.request.urlopen(base + "/", timeout=5) as resp:
            if resp.status != 200:
                raise OSError(f"/ answered {resp.status}")

    cmd += ["serve", "--store", str(root), "--port", str(port)]
    with started(cmd, ready, what="paretolens serve", timeout=90, poll=0.2, cwd=code, env=env):
        yield base


def _driver(profile: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))


def _throwaway_browser() -> None:
    """Start and stop chromium once, so the first measured load does not pay for reading the
    browser's own files from disk."""
    profile = Path(tempfile.mkdtemp(prefix="paretolens-chromium-"))
    driver = _driver(profile)
    try:
        driver.get("about:blank")
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _warm(base: str, page: str) -> None:
    """Ask the server for a page's layout as the browser would (`?page=` names the page)."""
    from dashboard.app import layout_url

    req = urllib.request.Request(base + layout_url(page))
    with urllib.request.urlopen(req, timeout=300) as resp:
        resp.read()


def _state(driver: Any) -> dict[str, Any]:
    got: dict[str, Any] = driver.execute_script(
        "var p = window.__pl || {}; var paint = performance.getEntriesByType('paint');"
        "var fcp = paint.filter(function (e) { return e.name === 'first-contentful-paint'; });"
        "var js = performance.getEntriesByType('resource').filter(function (e) {"
        " return /\\.js(\\?|$)/.test(e.name); }).map(function (e) {"
        " return [e.startTime, e.responseEnd, e.transferSize, e.decodedBodySize]; });"
        "var nav = performance.getEntriesByType('navigation')[0];"
        "var shown = function (t) { return t === null || t < 0 || !fcp.length ? t :"
        " Math.max(t, fcp[0].startTime); };"
        "return {firstPoint: shown(p.firstPoint), firstKind: p.firstKind, plots: p.plots || {},"
        " firstStatic: shown(p.firstStatic), firstPlotly: p.firstPlotly, loaf: p.loaf || [],"
        " staticBoth: shown(p.staticBoth === undefined ? null : p.staticBoth),"
        " rafPoint: p.firstPoint, js: js,"
        " html: nav ? [nav.transferSize, nav.decodedBodySize] : [0, 0],"
        " longTasks: p.longTasks || [], errors: p.errors || [],"
        " fcp: fcp.length ? fcp[0].startTime : null,"
        " heap: performance.memory ? performance.memory.usedJSHeapSize : null};"
    )
    return got


def _drawn(plots: dict[str, list[dict[str, Any]]], chart: str) -> dict[str, Any] | None:
    """The first draw of `chart` with all its points (the second chart's first WebGL draw has
    set-up steps of 0 and 2 transparent points before it: dashboard/assets/deferred.js)."""
    draws = plots.get(chart, [])
    most = max((p["points"] for p in draws), default=0)
    return next((p for p in draws if p["points"] == most > 2), None)


def load(
    url: str,
    timeout: float = 60.0,
    change: str | None = None,
    charts: tuple[str, ...] = (MAIN, SECOND),
) -> dict[str, Any]:
    """One cold load of `url` in a fresh browser; optionally one control change afterwards.

    Returns the probe's state plus `main`/`second` (the first drawing react of each chart) and,
    with `change`, `redraw_ms`: from the change to the main chart's redraw being painted.
    `charts` are the charts to wait for (the anchor page has one).
    """
    profile = Path(tempfile.mkdtemp(prefix="paretolens-chromium-"))
    driver = _driver(profile)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
        driver.get(url)
        deadline = time.monotonic() + timeout
        woken = False
        while True:
            st = _state(driver)
            if not woken and (st["firstPoint"] or 0) > 0:
                woken = wake(driver)
            if all(_drawn(st["plots"], chart) for chart in charts):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url}: the charts were not drawn in {timeout:.0f} s: {st}")
            time.sleep(0.05)
        time.sleep(0.3)  # let the tables request that follows the first draw start and settle
        if change is not None:
            before = len(st["plots"].get(MAIN, []))
            t0 = driver.execute_script(change)
            while True:
                st = _state(driver)
                redraws = st["plots"].get(MAIN, [])[before:]
                if redraws:
                    st["redraw_ms"] = redraws[-1]["done"] - t0
                    break
                if time.monotonic() > deadline + 10:
                    raise RuntimeError(f"{url}: no redraw after the control change")
                time.sleep(0.02)
        st = _state(driver) | {k: v for k, v in st.items() if k == "redraw_ms"}
        st["main"], st["second"] = (_drawn(st["plots"], c) for c in (*charts, charts[0])[:2])
        st["console"] = [
            e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"
        ]
        return st
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


# A run page showing its static charts runs its scripts on the user's first intent
# (dashboard/assets/boot.js): `load` wakes it once its first point is painted, with a real
# pointer move onto a control's stand-in (no click: nothing is replayed), so this suite's
# figures read the live page as if the user reached for a control at the first paint.
STAND_IN = "return document.querySelector('#static-page .sidebar .sk-dropdown');"


def wake(driver: Any) -> bool:
    """Wake a page showing its static charts (see `STAND_IN`); True once nothing is left to wake."""
    from selenium.webdriver.common.action_chains import ActionChains

    target = driver.execute_script(STAND_IN)
    if target is not None:
        ActionChains(driver, duration=0).move_to_element(target).perform()
    return True


# A click on the log-y checkbox (a real input event: React onChange, then the Dash callback).
TOGGLE_LOGY = (
    "var box = document.querySelector('input[type=checkbox][value=logy]');"
    "if (!box) { throw new Error('no log-y checkbox on the page'); }"
    "var t = performance.now(); box.click(); return t;"
)


def _samples(loads: list[dict[str, Any]], key: str) -> Samples:
    if key == "first":
        return Samples([float(s["firstPoint"]) / 1000 for s in loads])
    if key == "plotly":
        return Samples([float(s["firstPlotly"]) / 1000 for s in loads])
    if key == "both":
        return Samples([max(s["main"]["done"], s["second"]["done"]) / 1000 for s in loads])
    if key == "redraw":
        return Samples([float(s["redraw_ms"]) / 1000 for s in loads])
    return Samples([float(s["main"]["done"]) / 1000 for s in loads])


def _med(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def _script_ms(load: dict[str, Any], until: float) -> float:
    """Script time in the long animation frames (over 50 ms) that started before `until`."""
    return float(sum(js for start, _, js in load["loaf"] if start < until))


def _bytes(load: dict[str, Any], until: float | None = None) -> tuple[float, float]:
    """JS (wire, decoded) bytes fetched, all or those fetched before `until`."""
    got = [r for r in load["js"] if until is None or r[1] <= until]
    return float(sum(r[2] for r in got)), float(sum(r[3] for r in got))


def weight(loads: list[dict[str, Any]]) -> str:
    """JS bytes and script time before the first (static, plotly) point, medians of the loads."""
    kb = 1024

    def med(f: Any) -> float:
        return _med([float(f(s)) for s in loads])

    first_plotly = [s.get("firstPlotly") or s["firstPoint"] for s in loads]
    return (
        f"JS fetched before the first point: {med(lambda s: _bytes(s, s['firstPoint'])[0]) / kb:.0f} KB "
        f"on the wire / {med(lambda s: _bytes(s, s['firstPoint'])[1]) / kb:.0f} KB decoded; "
        f"before plotly's first point: {_med([_bytes(s, t)[0] for s, t in zip(loads, first_plotly, strict=True)]) / kb:.0f} KB / "
        f"{_med([_bytes(s, t)[1] for s, t in zip(loads, first_plotly, strict=True)]) / kb:.0f} KB; "
        f"every script of the load: {med(lambda s: _bytes(s)[0]) / kb:.0f} KB / "
        f"{med(lambda s: _bytes(s)[1]) / kb:.0f} KB; page HTML {med(lambda s: s['html'][0]) / kb:.0f} KB / "
        f"{med(lambda s: s['html'][1]) / kb:.0f} KB. Script time in long frames before the first point: "
        f"{med(lambda s: _script_ms(s, s['firstPoint'])):.0f} ms; before plotly's first point: "
        f"{_med([_script_ms(s, t) for s, t in zip(loads, first_plotly, strict=True)]):.0f} ms."
    )  # fmt: skip


def _describe(loads: list[dict[str, Any]]) -> str:
    fcp = _med([s["fcp"] or 0 for s in loads])
    heap = _med([s["heap"] or 0 for s in loads]) / 2**20
    kinds = sorted({str(s["firstKind"]) for s in loads})
    pts = loads[0]["main"]["points"]
    errors = sorted({e for s in loads for e in s["errors"] + s["console"]})[:3]
    return (
        f"First contentful paint {fcp:.0f} ms; JS heap once drawn {heap:.1f} MB; main chart "
        f"{pts} points, first point detected via {', '.join(kinds)}; "
        f"console errors: {errors or 'none'}."
    )


def build(root: Path, cfg: Config) -> tuple[dict[str, str], dict[str, int]]:
    """One store with the 500-point run, the 5,000-point run and the InferenceX anchor run."""
    from ingest.pipeline import ingest_paths
    from ingest.store import Store

    small = synth_points(runs_spec(cfg.run_points, points_per_run=cfg.run_points, seed=21))
    big = synth_points(
        runs_spec(cfg.big_page_points, points_per_run=cfg.big_page_points, seed=22)
    ).with_columns(pl.lit("synth-big").alias(Col.RUN_ID))
    ids = write_store(pl.concat([small, big]), root)
    anchor_dir = root.parent / "kimik2.5_8k1k"
    write_anchor_dir(anchor_dir, isl=8192)
    report = ingest_paths([anchor_dir], Store(root), run_id="kimik2.5-int4-8k1k")
    if report.accepted != 117:
        raise RuntimeError(f"the anchor rows ingested {report.accepted} of 117 points")
    arms = {
        "small": small.select(Col.ARM_ID, Col.ISL).n_unique(),
        "big": big.select(Col.MODEL_PREFIX, Col.HW, Col.ARM_ID, Col.ISL).n_unique(),
    }
    return {"small": ids[0], "big": "synth-big", "inferencex": "kimik2.5-int4-8k1k"}, arms


def first_point_figure(
    cfg: Config, kimi: list[dict[str, Any]], floor: list[dict[str, Any]], page: str
) -> Figure:
    """The 117-point run page's first point against InferenceX (documented) and the static-plotly
    floor (same run, interleaved)."""
    first, plotly = _samples(kimi, "first"), _samples(kimi, "plotly")
    floor_first = _samples(floor, "first")
    half_ms = INFERENCEX_FIRST_POINT_MS / 2
    ms = first.median * 1000
    to_floor = first.median / floor_first.median
    kinds = sorted({str(s["firstKind"]) for s in kimi})
    return Figure(
        name="InferenceX-style: 117 8k/1k Kimi-K2.5 points, navigation to first chart point",
        samples=first,
        target=f"<= 0.5x InferenceX-app's {INFERENCEX_FIRST_POINT_MS:.0f} ms ({half_ms:.0f} ms), "
        "and <= 1.3x the static-plotly floor of the same run",
        checks=[
            Check(f"median {ms:.0f} ms <= {half_ms:.0f} ms", ms <= half_ms),
            Check(f"{to_floor:.2f}x the static-plotly floor <= 1.3x", to_floor <= 1.3),
        ],
        anchors=[
            Anchor(
                "InferenceX-app /inference, 117 points (docs/anchors.md; not re-run here)",
                Samples([INFERENCEX_FIRST_POINT_MS / 1000]),
            ),
            Anchor(
                "static plotly page, same 117 points and plotly bundle (same run, interleaved)",
                floor_first,
            ),
        ],
        notes=(
            f"First point drawn via {', '.join(kinds)}: the page HTML carries the chart as static "
            "SVG (dashboard/prerender/chart_svg.py), replaced in place by plotly's. Plotly's own first "
            f"point: median {plotly.median * 1000:.0f} ms "
            f"({plotly.median * 1000 / INFERENCEX_FIRST_POINT_MS:.2f}x InferenceX-app, "
            f"{plotly.median / floor_first.median:.2f}x the floor). Both charts drawn: median "
            f"{_samples(kimi, 'both').median * 1000:.0f} ms (InferenceX-app: 952 ms). "
            f"{weight(kimi)} The floor page: {weight(floor)} {_describe(kimi)} The page is "
            f"`{page}` over the rows of `shared/benchmarks/kimik2.5_int4_anchor_rows.json` with "
            "isl 8192, ingested through `ingest_paths`; the floor page (benchmarks/anchor_page.py) "
            "draws the same points with one Plotly.newPlot from a gzip-serving loopback server. "
            "The InferenceX-app figure was measured by the same method on a machine of this kind "
            "(InferenceX-app is not installed here), so that ratio compares across runs; the floor "
            "ratio compares within this one."
        ),
        command=cfg.command("browser"),
    )


def run(cfg: Config) -> Section:
    """Measure the in-browser figures."""
    from dashboard.app import PLOTLY_BUNDLES
    from ingest.store import Store
    from views import urls

    section = Section("Dashboard in headless chromium")
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        section.notes.append(
            "**Not measured**: /usr/bin/chromium or /usr/bin/chromedriver is missing "
            "(`apt-get install -y chromium chromium-driver`)."
        )
        return section
    root = cfg.workdir / "browser" / "store"
    runs, arms = build(root, cfg)
    series = anchor_page.points_by_arm(Store(root).points([runs["inferencex"]]))
    n = cfg.browser_loads
    with server(root) as base, anchor_page.serve(series, PLOTLY_BUNDLES["basic"]) as floor_url:
        pages = {k: base + urls.runs(rid) for k, rid in runs.items()}
        for rid in runs.values():  # warm the server's analysis cache (not measured)
            _warm(base, urls.runs(rid))
        _throwaway_browser()
        kimi, floor, small, big = [], [], [], []
        for _ in range(n):  # interleaved, so a burst of machine load hits every page alike
            kimi.append(load(pages["inferencex"]))
            floor.append(load(floor_url, charts=(anchor_page.CHART_ID,)))
            small.append(load(pages["small"]))
            big.append(load(pages["big"], timeout=120, change=TOGGLE_LOGY))
    section.figures.append(first_point_figure(cfg, kimi, floor, urls.runs(runs["inferencex"])))
    drawn = _samples(small, "main")
    section.figures.append(
        Figure(
            name=f"{cfg.run_points}-point run page, chart fully drawn in headless chromium",
            samples=drawn,
            target="<= 1.5 s from navigation",
            checks=[Check(f"median {drawn.median:.3f} s <= 1.5 s", drawn.median <= 1.5)],
            notes=(
                f"First point {_samples(small, 'first').median * 1000:.0f} ms, both charts "
                f"{_samples(small, 'both').median * 1000:.0f} ms (medians). {_describe(small)}"
            ),
            command=cfg.command("browser"),
        )
    )
    redraw = _samples(big, "redraw")
    after = [max([d for t, d in s["longTasks"] if t >= s["main"]["done"]] or [0.0]) for s in big]
    longest = _med(after)
    section.figures.append(
        Figure(
            name=f"{cfg.big_page_points:,}-point run page stays interactive (log-y toggle redraw)",
            samples=redraw,
            target="a control change repaints the chart in <= 500 ms, no main-thread task "
            "> 200 ms once drawn (our reading of 'stays interactive')",
            checks=[
                Check(
                    f"median redraw {redraw.median * 1000:.0f} ms <= 500 ms", redraw.median <= 0.5
                ),
                Check(
                    f"longest task after the first draw {longest:.0f} ms <= 200 ms", longest <= 200
                ),
            ],
            notes=(
                f"Fully drawn: median {_samples(big, 'main').median * 1000:.0f} ms, first point "
                f"{_samples(big, 'first').median * 1000:.0f} ms. The page holds {arms['big']} arms "
                f"(the 500-point page {arms['small']}). {_describe(big)} The change is "
                "a click on the log-y checkbox: React's change event, the Dash callback round "
                "trip, and plotly's redraw."
            ),
            command=cfg.command("browser"),
        )
    )
    return section
