"""Dashboard server time, in-process: the run page's first render and its filter changes.

The first render is what a browser's first visit to a run page costs the server: the page HTML,
`/_dash-layout` (which carries the page and its main chart, see dashboard/app.py), and
`/_dash-dependencies` through the Flask test client, plus the tables callback the page fires
once the chart is drawn (`RunCallbacks.on_tables`, called in-process and JSON-encoded as Dash
would) and the second chart's figure it asks for at the same time (`RunCallbacks.on_second`),
the two side by side as the server runs them.
Every sample visits a run not seen before (a cold analysis cache). A filter change is
`RunCallbacks.on_controls` (the main chart, the URL, the exports bar) and `on_second` (the
second chart), JSON-encoded, run side by side (a thread each, as the server runs the browser's
two requests) until both answer, from the run's page as first drawn, cycling through framework,
spec-decode and sequence-length filters and the log-y toggle.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.io.json as pio_json
from dash.exceptions import PreventUpdate

from benchmarks.config import Config
from benchmarks.report import Check, Figure, Section
from benchmarks.synth import runs_spec, synth_points, write_store
from benchmarks.timing import Samples

SAMPLES = 20  # p95 needs more than 5


def _encode(value: Any) -> int:
    return len(pio_json.to_json_plotly(value))


def build_store(root: Path, n_runs: int, points: int, seed: int) -> list[str]:
    """A store of `n_runs` runs of `points` points each; returns the run ids."""
    spec = runs_spec(n_runs * points, points_per_run=points, seed=seed)
    return write_store(synth_points(spec), root)


class Page:
    """One app over a store, with helpers that time the run page's requests and callbacks."""

    def __init__(self, root: Path) -> None:
        from dashboard.app import WARM_THREAD, create_app, settle_heap
        from dashboard.context import AppContext  # noqa: F401  (import cost paid here)
        from dashboard.pages.run import RunCallbacks

        self.app = create_app(root)
        # The app compresses its static files in a thread once built (dashboard/app.py `warm`);
        # the figures are a running server's, not its first seconds'.
        for thread in threading.enumerate():
            if thread.name == WARM_THREAD:
                thread.join()
        self.client = self.app.server.test_client()
        ctx = _context_of(self.app)
        self.source = ctx.source
        self.callbacks = RunCallbacks(ctx)
        self.source.warm()
        settle_heap()  # as `paretolens serve` and `paretolens.wsgi` do once the app is built
        self._tokens: dict[str, Any] = {}
        self._built: dict[str, Any] = {}
        self.main_parts: list[float] = []

    def first_render(self, run_id: str) -> dict[str, float]:
        """Server seconds of each part of a first visit to a run page."""
        from dashboard.app import layout_url
        from views import urls

        path = urls.runs(run_id)
        out: dict[str, float] = {}
        t = time.perf_counter()
        html = self.client.get(path)
        out["html"] = time.perf_counter() - t
        t = time.perf_counter()
        layout = self.client.get(layout_url(path))
        out["layout"] = time.perf_counter() - t
        t = time.perf_counter()
        deps = self.client.get("/_dash-dependencies")
        out["dependencies"] = time.perf_counter() - t
        for resp in (html, layout, deps):
            if resp.status_code != 200:
                raise RuntimeError(f"GET {path}: HTTP {resp.status_code}")
        if b"main-chart" not in layout.data:
            raise RuntimeError(f"the layout of {path} has no main chart")
        values, ids = self.controls(run_id)
        # Once the first chart is drawn the page asks for the open table and the second chart
        # together; the server answers the two requests side by side.

        def second() -> None:
            fig, self._built[run_id] = self.callbacks.on_second(values, ids, 1, None)
            _encode((fig, self._built[run_id]))

        def tables() -> None:
            _encode(self.callbacks.on_tables(values, ids, time.time(), None))

        out["tables and second chart"] = _side_by_side(tables, second)[1]
        out["total"] = sum(out.values())
        return out

    def controls(self, run_id: str, **changes: Any) -> tuple[list[Any], list[dict[str, Any]]]:
        """(values, ids) of the run page's controls for a view, as Dash passes them."""
        from dashboard.ids import control
        from views.query.state import RunView

        view = RunView(runs=(run_id,)).replace(**changes)
        values = view.controls()
        return list(values.values()), [control(k) for k in values]

    def filter_change(self, run_id: str, changes: dict[str, Any]) -> float:
        """Server seconds of the chart callbacks of one control change, from the run's page as
        first drawn, until both have answered: the main chart's (`on_controls`) and the second
        chart's (`on_second`), run side by side as the server runs the browser's two requests
        (a thread each). The main chart's own time is appended to `self.main_parts`."""
        from views import urls

        values, ids = self.controls(run_id, **changes)
        args: list[Any] = [values, ids, "?" + urls.runs(run_id).split("?", 1)[1]]
        if "tokens" in inspect.signature(self.callbacks.on_controls).parameters:
            args.append(self.tokens(run_id))  # the page's trace tokens (a dcc.Store), as State
        built = self.second_built(run_id)

        def second() -> None:
            with contextlib.suppress(PreventUpdate):  # PreventUpdate: the second chart stays
                _encode(self.callbacks.on_second(values, ids, 1, built))

        # As registered: the app answers with its components as plain JSON values (where the
        # function is there), which spares the encoder a walk of the figure; Dash encodes the
        # outputs that are not `no_update`.
        from dash import no_update

        from dashboard.pages import run as run_page

        on_controls = getattr(run_page, "plain_components", lambda f: f)(self.callbacks.on_controls)

        def main() -> int:
            return _encode([v for v in on_controls(*args) if v is not no_update])

        main_s, both = _side_by_side(main, second)
        self.main_parts.append(main_s)
        return both

    def second_built(self, run_id: str) -> Any:
        """The second chart's state (SECOND_TOKENS) as the run's page first drew it."""
        if run_id not in self._built:
            values, ids = self.controls(run_id)
            self._built[run_id] = self.callbacks.on_second(values, ids, 1, None)[1]
        return self._built[run_id]

    def tokens(self, run_id: str) -> Any:
        """The trace tokens the run page's layout stores for its main chart."""
        from dashboard.pages.run_charts import main_figure, main_tokens
        from views.query.state import RunView

        if run_id not in self._tokens:
            view = RunView(runs=(run_id,))
            self._tokens[run_id] = main_tokens(main_figure(self.source.run_data(view), view))
        return self._tokens[run_id]

    def tables_after_change(self, run_id: str, changes: dict[str, Any]) -> float:
        """Server seconds of the tables callback that a filter change also fires."""
        values, ids = self.controls(run_id, **changes)
        t = time.perf_counter()
        _encode(self.callbacks.on_tables(values, ids, time.time(), None))
        return time.perf_counter() - t


def _side_by_side(main: Callable[[], object], beside: Callable[[], object]) -> tuple[float, float]:
    """Seconds until `main` has returned and until `beside` (run in a thread, as the server runs
    two requests the page sends together) has too."""
    worker = threading.Thread(target=beside, name="beside")
    t = time.perf_counter()
    worker.start()
    main()
    main_done = time.perf_counter() - t
    worker.join()
    return main_done, time.perf_counter() - t


def _context_of(app: Any) -> Any:
    # The app context is captured by the page callbacks; find it on the registered route callback.
    from dashboard.context import AppContext

    for cb in app.callback_map.values():
        fn = cb.get("callback")
        for cell in getattr(getattr(fn, "__wrapped__", fn), "__closure__", None) or ():
            if isinstance(cell.cell_contents, AppContext):
                return cell.cell_contents
    raise RuntimeError("could not find the dashboard's AppContext on its callbacks")


def filter_changes(page: Page, run_id: str) -> list[dict[str, Any]]:
    """Control changes a user makes on a run page, from the run's own facet values."""
    from views.query.state import RunView

    facets = page.source.run_data(RunView(runs=(run_id,))).facets
    changes: list[dict[str, Any]] = []
    for name in ("framework", "spec", "seq"):
        for opt in facets.get(name, [])[:2]:
            changes.append({name: (opt.value,)})
    changes += [{"logy": True}, {"frontier_only": True}]
    return changes


def _parts(seconds: list[float]) -> str:
    """p95 and median of the last SAMPLES timings (the warm-up call is the one before)."""
    got = Samples(seconds[-SAMPLES:])
    return f"p95 {got.p95() * 1000:.0f} ms, median {got.median * 1000:.0f} ms"


def _timed_samples(fn: Callable[[int], float], n: int) -> Samples:
    fn(-1)
    return Samples([fn(i) for i in range(n)])


def run(cfg: Config) -> Section:
    """Measure the server-side dashboard figures."""
    section = Section("Dashboard server time (in-process, Flask test client)")
    root = cfg.workdir / "dash" / "store"
    run_ids = build_store(root, SAMPLES + 2, cfg.run_points, seed=11)
    big_root = cfg.workdir / "dash" / "big"
    big_ids = build_store(big_root, 1, cfg.big_page_points, seed=12)
    page = Page(root)
    cold = run_ids[1:]  # run_ids[0] was warmed by the app itself
    parts = [page.first_render(cold[i]) for i in range(SAMPLES)]
    first = Samples([p["total"] for p in parts])
    breakdown = ", ".join(
        f"{k} {sorted(p[k] for p in parts)[len(parts) // 2] * 1000:.1f} ms"
        for k in ("html", "layout", "dependencies", "tables and second chart")
    )
    section.figures.append(
        Figure(
            name=f"Run page first render, {cfg.run_points}-point run (server time)",
            samples=first,
            stat="p95",
            target="<= 150 ms at p95",
            checks=[Check(f"p95 {first.p95() * 1000:.0f} ms <= 150 ms", first.p95() <= 0.150)],
            notes=(
                f"{SAMPLES} first visits, each to a different run (cold analysis cache). "
                f"Medians of the parts: {breakdown}."
            ),
            command=cfg.command("dashboard"),
        )
    )
    rid = run_ids[0]
    changes = filter_changes(page, rid)
    cyc = itertools.cycle(changes)
    page.main_parts.clear()
    chart = _timed_samples(lambda _i: page.filter_change(rid, next(cyc)), SAMPLES)
    tables = _timed_samples(lambda _i: page.tables_after_change(rid, next(cyc)), SAMPLES)
    section.figures.append(
        Figure(
            name=f"Filter change on a {cfg.run_points}-point run page (chart callback)",
            samples=chart,
            stat="p95",
            target="<= 100 ms at p95",
            checks=[Check(f"p95 {chart.p95() * 1000:.0f} ms <= 100 ms", chart.p95() <= 0.100)],
            notes=(
                f"{SAMPLES} changes cycling through {len(changes)} kinds ({', '.join(sorted({k for c in changes for k in c}))}). "
                f"Both charts' callbacks (two requests, side by side) until both answer; the main chart's answer: {_parts(page.main_parts)}. "
                f"The tables callback the same change fires (its own request, after the chart): "
                f"p95 {tables.p95() * 1000:.0f} ms, median {tables.median * 1000:.0f} ms."
            ),
            command=cfg.command("dashboard"),
        )
    )
    big = Page(big_root)
    big_first = Samples([big.first_render(big_ids[0])["total"]])
    big_changes = itertools.cycle(filter_changes(big, big_ids[0]))
    big.main_parts.clear()
    big_chart = _timed_samples(lambda _i: big.filter_change(big_ids[0], next(big_changes)), SAMPLES)
    section.figures.append(
        Figure(
            name=f"{cfg.big_page_points:,}-point run page: filter change (chart callback)",
            samples=big_chart,
            stat="p95",
            target="stays interactive: a filter change <= 100 ms at p95 (as for 500 points)",
            checks=[
                Check(f"p95 {big_chart.p95() * 1000:.0f} ms <= 100 ms", big_chart.p95() <= 0.100)
            ],
            notes=(
                f"Both charts' callbacks (two requests, side by side) until both answer; the main "
                f"chart's answer: "
                f"{_parts(big.main_parts)}. First render of that page (cold, one visit): "
                f"{big_first.median * 1000:.0f} ms."
            ),
            command=cfg.command("dashboard"),
        )
    )
    return section
