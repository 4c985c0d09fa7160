"""Interactive first (issue 28): what a user of the run page feels, at 117, 1,000 and 5,000 points.

For each page size, in one interleaved run (page, floor, page, floor ...; a fresh headless
chromium with an empty profile per load, `benchmarks/suite_browser.py`'s flags and server), four
figures read in the page from navigation start:

- **first point painted**: `probe.js`'s first point (static SVG or plotly);
- **first point that answers a hover**: `hover_probe.js` moves a synthetic mouse onto the first
  point it finds every frame (a static point carrying hover text, else a plotly marker at its
  pixel position) and records the frame in which a label with the point's values appeared;
- **fully interactive**: both charts drawn and no main-thread task over 50 ms left (the later of
  the two charts' draws and the end of the last long task, once 1.5 s have passed with none and
  no chart draw). The page gets no input before then; a page showing its two static charts
  (the run page until the user's first intent) has them drawn when its HTML is painted;
- **the first control change repainted**: a real click where the log-y checkbox stands (on a
  page still showing its static charts, its stand-in: the click wakes the page, which loads
  plotly, Dash and React and replays the click) to the first main-chart draw with a log y axis.

The anchors, interleaved with the page (page, floor, app, page, floor, app ...):

- the same-run plotly floor page (`benchmarks/anchor_page.py`: the same points, one
  `Plotly.newPlot` with the bundle the run page loads; its "interactive" is its draw with no long
  task left, its hover plotly's);
- the InferenceX app, when a built one is named by `PARETOLENS_INFERENCEX_APP`
  (`benchmarks/inferencex_app.py`; docs/performance.md says how to build it): per page size its
  `next start` serves a dump of the same points (`benchmarks/inferencex_dump.py`) and its
  `/inference?g_model=Kimi-K2.5` page is loaded with the same probes plus `app_probe.js`. Its
  first point is the first D3 `.dot-group` painted, its first hover the frame its tooltip showed
  a point's values, its "interactive" the last change of its point count and the end of its last
  task over 50 ms, whichever is later. Without a build, the section says where it looked and
  the targets read the floor.

Two analysis figures at real sizes, one implementation each (what the run page calls):
verdicts, frontiers and their polylines for a 10,000-point page (target 50 ms) and for a
1,000,000-row history (2,000 runs of 500 points; target 2 s).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

from benchmarks import anchor_page, inferencex_app
from benchmarks import suite_browser as sb
from benchmarks.config import Config
from benchmarks.inferencex_dump import AppView, write_dump
from benchmarks.report import Anchor, Check, Figure, Section
from benchmarks.suite_frontier import _with_polylines
from benchmarks.synth import runs_spec, synth_points, write_anchor_dir, write_store
from benchmarks.timing import Samples, repeat
from ingest.contract.col import Col

HOVER_PROBE = (Path(__file__).parent / "hover_probe.js").read_text()
APP_PROBE = (Path(__file__).parent / "app_probe.js").read_text()
LOADS = int(os.environ.get("PARETOLENS_BENCH_LOADS", "3"))  # small: the machine is shared
QUIET_S = 1.5  # no new long task for this long: the page has settled
LONG_TASK_MS = 50.0
STATE = (
    "var h = window.__plh || {};"
    "return {hover: h.hover, hoverKind: h.hoverKind, hoverText: h.hoverText, tries: h.tries,"
    " frames: h.frames || []};"
)
APP_STATE = "var x = window.__plx || {}; return {dots: x.dots || 0, dotsAt: x.dotsAt};"


# The first control change, as a user makes it: a real click (CDP input, duration 0) where the
# log-y checkbox stands: on a page still showing its static charts, on the checkbox's stand-in
# (the click wakes the page, dashboard/assets/boot.js, and is replayed on the live checkbox);
# on a live page, on the checkbox. WATCH records when the gesture began (the first pointerdown,
# or the scroll that brought the checkbox into view, whichever came first).
LOG_Y = (
    "var s = document.querySelector('#static-page');"
    "var labels = s ? s.querySelectorAll('.sk-checks label') : [];"
    "for (var i = 0; i < labels.length; i++) { if (labels[i].textContent === 'log y') { return labels[i]; } }"
    "var box = document.querySelector('input[type=checkbox][value=logy]');"
    "return box ? box.closest('label') || box : null;"
)
WATCH = (
    "window.__plc = null; ['pointerdown', 'scroll'].forEach(function (n) {"
    " window.addEventListener(n, function (e) { if (window.__plc === null) { window.__plc = e.timeStamp; } }, true); });"
)


HALF_STATIC = (
    "var c = document.querySelectorAll('#static-page .static-chart');"
    "return c.length > 0 && Array.prototype.filter.call(c, function (e) {"
    " return e.querySelector('.scatterlayer .point'); }).length < 2;"
)


def _static_shown(st: dict[str, Any]) -> bool:
    """The page shows its static charts (both drawn in its HTML) and plotly has drawn nothing."""
    return st.get("staticBoth") is not None and float(st["staticBoth"]) > 0 and not st["plots"]


def _first_change(driver: Any, deadline: float) -> float:
    """A real click on log y (`LOG_Y`) to the first main-chart draw with a log y axis painted,
    in ms: on a page still showing its static charts, the live page's load included."""
    from selenium.webdriver.common.action_chains import ActionChains

    target = driver.execute_script(LOG_Y)
    if target is None:
        raise RuntimeError("no log-y checkbox (or stand-in) on the page")
    driver.execute_script(WATCH)
    ActionChains(driver, duration=0).move_to_element(target).click().perform()
    while True:
        st = sb._state(driver)
        logged = [p for p in st["plots"].get(sb.MAIN, []) if p.get("logy")]
        t0 = driver.execute_script("return window.__plc")
        if logged and t0 is not None:
            return float(logged[0]["done"]) - float(t0)
        if time.monotonic() > deadline:
            raise RuntimeError(f"no log-y redraw after the click: {st['plots']}")
        time.sleep(0.02)


def load(url: str, timeout: float, charts: tuple[str, ...], change: bool) -> dict[str, Any]:
    """One cold load: the probes' state once every chart in `charts` is drawn (by plotly, or
    both by the page HTML when the page shows its static charts) and the page has settled,
    `interactive` (ms), and with `change` the first control change's time `redraw_ms`
    (`_first_change`). The page gets no input before the change: what runs before it, the
    page runs by itself, and the quiet window catches it."""
    profile = Path(tempfile.mkdtemp(prefix="paretolens-chromium-"))
    driver = sb._driver(profile)
    try:
        for source in (sb.PROBE, HOVER_PROBE):
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": source})
        driver.get(url)
        deadline = time.monotonic() + timeout
        woken = None
        while True:
            st = sb._state(driver)
            hover = driver.execute_script(STATE)
            if woken is None and (st["firstPoint"] or 0) > 0:
                # a static page whose second chart is not in its HTML (a WebGL page: its second
                # figure stays out of the first layout) shows both charts only once woken: woken
                # at its first paint, as the scripts ran before issue 28's first-use loading
                woken = bool(driver.execute_script(HALF_STATIC)) and sb.wake(driver)
            shown = _static_shown(st) or all(sb._drawn(st["plots"], c) for c in charts)
            if shown and hover["hover"] is not None:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url}: not drawn and hovered in {timeout:.0f} s: {hover}")
            time.sleep(0.05)
        quiet_since, seen = time.monotonic(), (len(st["longTasks"]), len(st["plots"]))
        while time.monotonic() - quiet_since < QUIET_S and time.monotonic() < deadline:
            time.sleep(0.1)
            st = sb._state(driver)
            if (len(st["longTasks"]), len(st["plots"])) != seen:
                quiet_since, seen = time.monotonic(), (len(st["longTasks"]), len(st["plots"]))
        # both charts drawn: by the page HTML while it shows them, else by plotly
        if all(sb._drawn(st["plots"], c) for c in charts):
            drawn = max(sb._drawn(st["plots"], c)["done"] for c in charts)  # type: ignore[index]
            st["drawnBy"] = "plotly"
        else:
            drawn, st["drawnBy"] = float(st["staticBoth"]), "static HTML"
        ends = [t + d for t, d in st["longTasks"] if d > LONG_TASK_MS]
        st |= driver.execute_script(STATE)
        # a label is seen no earlier than the page's first contentful paint (as probe.js's point)
        st["hover"] = max(float(st["hover"]), float(st["fcp"] or 0))
        st["interactive"] = max([drawn, *ends])
        st["main"] = sb._drawn(st["plots"], charts[0]) or {"points": _static_points(driver)}
        if woken:
            st["drawnBy"] += " (woken at the first paint: its second chart is not in its HTML)"
        if change:
            st["redraw_ms"] = _first_change(driver, deadline + 30)
        return st
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _static_points(driver: Any) -> int:
    return int(
        driver.execute_script(
            "var c = document.querySelector('#static-page .static-chart');"
            "return c ? c.querySelectorAll('.scatterlayer .point').length : 0;"
        )
    )


def load_app(url: str, timeout: float) -> dict[str, Any]:
    """One cold load of the InferenceX app's page: the probes' state once a point answered a
    hover and neither the point count nor the long tasks changed for `QUIET_S`, with
    `interactive` (ms) the later of the last count change and the end of the last long task."""
    profile = Path(tempfile.mkdtemp(prefix="paretolens-chromium-"))
    driver = sb._driver(profile)
    try:
        for source in (sb.PROBE, HOVER_PROBE, APP_PROBE):
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": source})
        driver.get(url)
        deadline = time.monotonic() + timeout
        while True:
            app, hover = driver.execute_script(APP_STATE), driver.execute_script(STATE)
            if app["dots"] > 0 and app["dotsAt"] is not None and hover["hover"] is not None:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{url}: no point drawn and hovered in {timeout:.0f} s: {app}, "
                    f"{ {k: hover[k] for k in ('hover', 'tries')} }"
                )
            time.sleep(0.05)
        st = sb._state(driver)
        quiet_since, seen = time.monotonic(), (len(st["longTasks"]), app["dots"])
        while time.monotonic() - quiet_since < QUIET_S and time.monotonic() < deadline:
            time.sleep(0.1)
            st, app = sb._state(driver), driver.execute_script(APP_STATE)
            if (len(st["longTasks"]), app["dots"]) != seen:
                quiet_since, seen = time.monotonic(), (len(st["longTasks"]), app["dots"])
        ends = [t + d for t, d in st["longTasks"] if d > LONG_TASK_MS]
        st |= driver.execute_script(STATE) | driver.execute_script(APP_STATE)
        st["hover"] = max(float(st["hover"]), float(st["fcp"] or 0))
        st["interactive"] = max([float(st["dotsAt"]), *ends])
        return st
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def profile(loads: list[dict[str, Any]], top: int = 6) -> str:
    """Where the long frames after the first hover went: script time by file and invoker (the
    long-animation-frame entries' attribution), mean per load, biggest first."""
    by: dict[tuple[str, str], float] = {}
    total = 0.0
    for s in loads:
        for start, duration, scripts in s["frames"]:
            if start < s["hover"]:
                continue
            total += duration
            for src, invoker, ms in scripts:
                key = (src or "(inline)", invoker)
                by[key] = by.get(key, 0.0) + ms
    n = max(len(loads), 1)
    parts = [f"{src} {inv!r} {ms / n:.0f} ms" for (src, inv), ms in sorted(by.items(), key=lambda kv: -kv[1])[:top]]  # fmt: skip
    return (
        f"Long frames after the first hover: {total / n:.0f} ms per load; script time in them by "
        f"file and invoker: {'; '.join(parts) or 'none'}."
    )


def _s(loads: list[dict[str, Any]], key: str) -> Samples:
    return Samples([float(s[key]) / 1000 for s in loads])


def build(root: Path, big: int) -> dict[str, str]:
    """One store: the 117 Kimi-K2.5 anchor points, a 1,000-point and a `big`-point run."""
    from ingest.pipeline import ingest_paths
    from ingest.store import Store

    k1 = synth_points(runs_spec(1000, points_per_run=1000, seed=31)).with_columns(
        pl.lit("synth-1k").alias(Col.RUN_ID)
    )
    k5 = synth_points(runs_spec(big, points_per_run=big, seed=32)).with_columns(
        pl.lit("synth-big").alias(Col.RUN_ID)
    )
    write_store(pl.concat([k1, k5]), root)
    anchor_dir = root.parent / "kimik2.5_8k1k"
    write_anchor_dir(anchor_dir, isl=8192)
    report = ingest_paths([anchor_dir], Store(root), run_id="kimik2.5-int4-8k1k")
    if report.accepted != 117:
        raise RuntimeError(f"the anchor rows ingested {report.accepted} of 117 points")
    return {"117": "kimik2.5-int4-8k1k", "1,000": "synth-1k", f"{big:,}": "synth-big"}


def _app_notes(app: list[dict[str, Any]], counts: str) -> str:
    kb = 1024
    js = sb._med([float(sb._bytes(s)[0]) for s in app]) / kb
    return (
        f"InferenceX app: {counts}; its chart drew {app[0]['dots']} `.dot-group`s (first load); "
        f"first point via {', '.join(sorted({str(s['firstKind']) for s in app}))}; every script "
        f"of its load {js:.0f} KB on the wire; its first label: "
        f"{' '.join(str(app[0]['hoverText']).split())[:160]!r}. "
    )


def page_figures(
    size: str,
    page: list[dict[str, Any]],
    floor: list[dict[str, Any]],
    app: list[dict[str, Any]] | None,
    where: str,
    cfg: Config,
) -> list[Figure]:
    """The four figures of one page size, with their ratios to the InferenceX app (when built)
    and to the floor."""
    first, hover = _s(page, "firstPoint"), _s(page, "hover")
    inter, redraw = _s(page, "interactive"), _s(page, "redraw_ms")
    f_first, f_hover, f_inter = (
        _s(floor, "firstPoint"),
        _s(floor, "hover"),
        _s(floor, "interactive"),
    )
    kinds = sorted({f"{s['firstKind']} / {s['hoverKind']}" for s in page})
    drawn_by = sorted({str(s["drawnBy"]) for s in page})
    floor_a = Anchor(f"plotly floor page, the same {size} points (same run, interleaved)", f_first)
    pts = page[0]["main"]["points"]
    if app is None:
        x_first = x_hover = x_inter = None
        where_app = (
            f"The InferenceX app was not measured ({where}): the targets read the floor page. "
        )
    else:
        x_first, x_hover = _s(app, "firstPoint"), _s(app, "hover")
        x_inter = _s(app, "interactive")
        where_app = f"The InferenceX app: {where}, the same {size} points, interleaved. "
    app_first = Anchor(f"InferenceX app's first point, the same {size} points", x_first)
    common = (
        f"{where_app}Main chart {pts} points; first point / first hover via {', '.join(kinds)}. "
        f"{sb.weight(page)} Loads per page: {len(page)} (small: shared machine)."
    )
    hover_anchors = [floor_a]
    hover_anchors.append(Anchor("plotly floor page: its first hover (plotly's label)", f_hover))
    inter_anchors = [Anchor("plotly floor page: drawn, no task over 50 ms left", f_inter)]
    if x_first is not None:  # the InferenceX app's anchors first: the summary shows two
        hover_anchors[1:1] = [Anchor("InferenceX app: its first hover (its tooltip)", x_hover)]
        hover_anchors.insert(0, app_first)
        inter_anchors.insert(
            0, Anchor("InferenceX app: points drawn, no task over 50 ms left", x_inter)
        )
    if x_first is None:
        hover_check = Check(
            f"{hover.median / f_first.median:.2f}x the floor's first point < 1x (no InferenceX app)",
            hover.median < f_first.median,
        )
        inter_checks: list[Check] = []
    else:
        assert x_inter is not None
        ratio, inter_ratio = hover.median / x_first.median, inter.median / x_inter.median
        hover_check = Check(
            f"{ratio:.2f}x the InferenceX app's first point <= 0.33x", ratio <= 0.33
        )
        inter_checks = [
            Check(f"{inter_ratio:.2f}x the InferenceX app's <= 0.5x", inter_ratio <= 0.5)
        ]
    return [
        Figure(
            name=f"{size}-point run page: first point painted",
            samples=first,
            target="informational (the hoverable point is the target)",
            anchors=[app_first, floor_a] if x_first is not None else [floor_a],
            notes=f"Floor's first point {f_first.median * 1000:.0f} ms. " + common,
            command=cfg.command("interactive"),
        ),
        Figure(
            name=f"{size}-point run page: first point that answers a hover with its values",
            samples=hover,
            target="<= 0.33x the InferenceX app's first point; without the app: below the "
            "floor page's first point",
            checks=[hover_check],
            anchors=hover_anchors,
            notes=f"Label text of the first load: {str(page[0]['hoverText'])[:160]!r}.",
            command=cfg.command("interactive"),
        ),
        Figure(
            name=f"{size}-point run page: both charts drawn, no main-thread task over 50 ms left",
            samples=inter,
            target="<= 0.5x the InferenceX app (informational against the floor without it)",
            checks=inter_checks,
            anchors=inter_anchors,
            notes=(
                "The later of the two charts' draws and the end of the last task over 50 ms, "
                f"after {QUIET_S} s with none and no chart draw, with no input given to the page. "
                f"Both charts drawn by: {', '.join(drawn_by)} (the static HTML's when the page "
                "shows its static charts until the user's first intent). "
                "Longest task after the first hover (median): "
                f"{sb._med([max([d for t, d in s['longTasks'] if t >= s['hover']] or [0.0]) for s in page]):.0f} ms. "
                + profile(page)
                + (f" The InferenceX app's: {profile(app)}" if app else "")
            ),
            command=cfg.command("interactive"),
        ),
        Figure(
            name=f"{size}-point run page: the first control change repainted, the live page's "
            "load included (a real click on log y)",
            samples=redraw,
            target="informational (issue 18's <= 500 ms reading assumed a loaded live page)",
            checks=[Check(f"median {redraw.median * 1000:.0f} ms <= 500 ms", True)]
            if redraw.median <= 0.5
            else [],
            notes="A real click (CDP input) where the log-y checkbox stands, once the page has "
            "settled, to the first main-chart draw with a log y axis painted; timed from the "
            "gesture's first event (the pointerdown, or the scroll that brought the checkbox into "
            "view). "
            + (
                "On a page still showing its static charts the click wakes it: plotly, Dash and "
                "React are run and the live page rendered before the click is replayed on the "
                "live checkbox (dashboard/assets/boot.js). "
                if drawn_by == ["static HTML"]
                else ""
            )
            + (
                f"Over issue 18's 500 ms (median {redraw.median * 1000:.0f} ms): informational, "
                "the live page's load is in it."
                if redraw.median > 0.5
                else ""
            ),
            command=cfg.command("interactive"),
        ),
    ]


def analysis_figures(cfg: Config) -> list[Figure]:
    """Verdicts, frontiers and polylines at a page's and a history's real sizes."""
    out = []
    for n, per_run, target, what in (
        (10_000, 10_000, 0.05, "a 10,000-point page"),
        (1_000_000, 500, 2.0, "a 1,000,000-row history (2,000 runs of 500 points)"),
    ):
        if cfg.quick:
            n //= 10
        points = synth_points(runs_spec(n, points_per_run=min(per_run, n), seed=41))
        got = repeat(functools.partial(_with_polylines, points), max(3, min(cfg.runs, 5)))
        out.append(
            Figure(
                name=f"Verdicts, frontiers and polylines of {what}",
                samples=got,
                target=f"<= {target:g} s",
                checks=[Check(f"median {got.median:.3f} s <= {target:g} s", got.median <= target)],
                unit="ms" if target < 1 else "s",
                notes=f"`analyze_points` and its group and arm frontiers (suite_frontier's "
                f"`_with_polylines`, what the run and history pages call), {points.height:,} rows.",
                command=cfg.command("interactive"),
            )
        )
    return out


def run(cfg: Config) -> Section:
    """Measure the interactive-first figures."""
    from dashboard.app import PLOTLY_BUNDLES
    from ingest.store import Store
    from views import urls

    section = Section("Interactive first: hover, fully interactive, analysis at real sizes")
    section.figures += analysis_figures(cfg)
    if not (Path(sb.CHROMIUM).exists() and Path(sb.CHROMEDRIVER).exists()):
        section.notes.append(
            "**Browser figures not measured**: no /usr/bin/chromium or chromedriver."
        )
        return section
    app_dir, where = inferencex_app.find_app()
    root = cfg.workdir / "interactive" / "store"
    runs = build(root, cfg.big_page_points)
    store = Store(root)
    with sb.server(root) as base:
        for size, rid in runs.items():
            url = base + urls.runs(rid)
            sb._warm(base, url)
            points = store.points([rid])
            series = anchor_page.points_by_arm(points)
            timeout = 120.0 if rid == "synth-big" else 60.0
            page, floor, app = [], [], []
            with contextlib.ExitStack() as stack:
                floor_url = stack.enter_context(anchor_page.serve(series, PLOTLY_BUNDLES["basic"]))
                app_url, counts = None, ""
                if app_dir is not None:
                    drawn = points.drop_nulls([Col.MEDIAN_INTVTY, Col.TPUT_PER_GPU])
                    dump = cfg.workdir / "interactive" / f"inferencex-dump-{rid}"
                    c = write_dump(drawn, dump, AppView())
                    counts = (
                        f"dump of {c.benchmarks} points in {c.configs} configs (one per arm), "
                        f"{c.availability} availability and {c.run_stats} run_stats rows"
                    )
                    app_url = stack.enter_context(inferencex_app.serve(app_dir, dump))
                sb._throwaway_browser()
                for _ in range(LOADS):  # interleaved: a burst of load hits all alike
                    page.append(load(url, timeout, (sb.MAIN, sb.SECOND), True))
                    floor.append(load(floor_url, timeout, (anchor_page.CHART_ID,), False))
                    if app_url is not None:
                        app.append(load_app(app_url, timeout))
            figures = page_figures(size, page, floor, app or None, where, cfg)
            if app:
                figures[0].notes = _app_notes(app, counts) + figures[0].notes
            section.figures += figures
    return section
