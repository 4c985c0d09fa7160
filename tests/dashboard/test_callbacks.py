"""Callbacks are plain methods: call them with what the browser would send."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from dash import html, no_update
from dash.exceptions import PreventUpdate
from plotly.io.json import to_json_plotly

from dashboard.context import AppContext
from dashboard.ids import COMPARE_CONTROL, CONTROL, INDEX_CONTROL, Id
from dashboard.pages.compare import CompareCallbacks
from dashboard.pages.index import IndexCallbacks
from dashboard.pages.jobs import JobsCallbacks
from dashboard.pages.launch import LaunchCallbacks
from dashboard.pages.missing import FetchCallbacks
from dashboard.pages.run import LOADING, RunCallbacks, plain_components
from dashboard.pages.run import layout as run_layout
from dashboard.pages.run_charts import second_figure, second_frame
from dashboard.pages.run_tables import points_body
from tests.dashboard.tree import text as _text
from views.query.state import CompareView, IndexView, RunView
from views.tables import KEY_POINT_COLUMNS


def _controls(
    values: dict[str, Any], kind: str = CONTROL
) -> tuple[list[Any], list[dict[str, str]]]:
    return list(values.values()), [{"type": kind, "field": k} for k in values]


def test_an_axis_switch_writes_the_url_and_redraws(ctx: AppContext) -> None:
    view = RunView(runs=("dsr1",))
    values, ids = _controls(view.replace(y="output_tput_per_gpu").controls())
    cb = RunCallbacks(ctx)
    search, nav, main, tokens, exports, _notes = cb.on_controls(
        values, ids, "?unofficialRun=dsr1", None
    )
    assert search == "?unofficialRun=dsr1&y=output_tput_per_gpu" and nav is no_update
    assert main["layout"]["yaxis"]["title"]["text"] == "Output tok/s/GPU (tok/s/GPU)"
    second, _built = cb.on_second(values, ids, 1, None)
    assert second["layout"]["yaxis"]["title"] == main["layout"]["yaxis"]["title"]
    assert tokens["main"][0] == "envelope~dsr1" and len(tokens["main"]) == len(main["data"])
    assert "/export/points.csv?unofficialRun=dsr1&y=output_tput_per_gpu" in str(exports)


def test_a_filter_change_answer_encodes_to_the_same_bytes_without_components(
    ctx: AppContext,
) -> None:
    """The registered `on_controls` answers its components as plain JSON values: Dash's
    encoder then writes the answer with orjson at once (a component in it made plotly walk
    every value of the figure first), and the bytes are the ones the components encode to."""
    values, ids = _controls(RunView(runs=("dsr1",), offload=("dram",)).controls())
    cb = RunCallbacks(ctx)
    answer = cb.on_controls(values, ids, "?unofficialRun=dsr1", None)
    plain = plain_components(cb.on_controls)(values, ids, "?unofficialRun=dsr1", None)
    assert isinstance(answer[4], html.Div) and isinstance(plain[4], dict)
    assert plain[4]["type"] == "Div" and plain[2] == answer[2]
    live = [v for v in answer if v is not no_update]
    assert to_json_plotly(live) == to_json_plotly([v for v in plain if v is not no_update])
    with pytest.raises(TypeError):
        orjson.dumps(live)
    assert orjson.dumps([v for v in plain if v is not no_update])


def test_a_filter_narrows_the_charts(ctx: AppContext) -> None:
    values, ids = _controls(RunView(runs=("dsr1",), offload=("dram",)).controls())
    search, *_rest = RunCallbacks(ctx).on_controls(values, ids, "?unofficialRun=dsr1", None)
    main = _rest[1]
    assert search == "?unofficialRun=dsr1&offload=dram"
    names = {t["name"] for t in main["data"] if "markers" in t["mode"] and t["meta"] != "pinned"}
    assert names == {"TP4 EP4 | no spec | kv dram", "TP8 EP8 | no spec | kv dram"}


def test_a_new_run_set_navigates(ctx: AppContext) -> None:
    values, ids = _controls(RunView(runs=("dsr1", "dsr1-rerun"), hide=("x~dsr1",)).controls())
    out = RunCallbacks(ctx).on_controls(values, ids, "?unofficialRun=dsr1", None)
    assert out[:2] == (no_update, "/inference?unofficialRun=dsr1,dsr1-rerun")


def test_tables_update_only_when_what_they_show_changes(ctx: AppContext) -> None:
    cb = RunCallbacks(ctx)
    view = RunView(runs=("dsr1",), at=40.0)
    key = view.data_key()
    *bodies, at, shown = cb.on_tables(*_controls(view.controls()), 1, None)
    assert shown == {"points": key, "at": key}
    assert "TP4 EP4 | no spec | kv dram" in _text(at) and "2,373.3 tok/s/GPU" in _text(at)
    # Only the open tab is built (points by default); the others when they are opened.
    assert bodies[0] is not no_update and all(b is no_update for b in bodies[1:])
    pruned = view.replace(tab="pruned")
    *bodies, at, shown = cb.on_tables(*_controls(pruned.controls()), 2, shown)
    assert "8 of 44 points kept in 4 arms" in _text(bodies[3]) and at is no_update
    assert [i for i, b in enumerate(bodies) if b is not no_update] == [3]
    assert shown == {"points": key, "at": key, "pruned": key}
    for unchanged in (pruned.replace(logx=True), view):  # display only; back to a built tab
        with pytest.raises(PreventUpdate):
            cb.on_tables(*_controls(unchanged.controls()), 3, shown)
    # A filter change rebuilds the open tab and sends the hidden built ones back to "loading".
    narrowed = pruned.replace(offload=("dram",))
    *bodies, at, shown = cb.on_tables(*_controls(narrowed.controls()), 4, shown)
    new = narrowed.data_key()
    assert shown == {"pruned": new, "at": new}
    assert _text(bodies[0]) == _text(LOADING) and "points kept in 2 arms" in _text(bodies[3])
    assert all(b is no_update for b in (bodies[1], bodies[2], bodies[4])) and at is not no_update


def _store_data(node: Any, store_id: str) -> Any:
    """The `data` of the store `store_id` in a layout."""
    if isinstance(node, list | tuple):
        found = [_store_data(n, store_id) for n in node]
        return next((f for f in found if f is not None), None)
    if getattr(node, "id", None) == store_id:
        return getattr(node, "data", None)
    children = getattr(node, "children", None)
    return None if children is None else _store_data(children, store_id)


def _component(node: Any, component_id: str) -> Any:
    """The component `component_id` of a layout."""
    if isinstance(node, list | tuple):
        found = [_component(n, component_id) for n in node]
        return next((f for f in found if f is not None), None)
    if getattr(node, "id", None) == component_id:
        return node
    children = getattr(node, "children", None)
    return None if children is None else _component(children, component_id)


def test_no_table_is_built_before_the_tables_are_in_view(ctx: AppContext) -> None:
    """Issue 28: the layout carries the arm ranking; until the tables are scrolled into view
    (TABLES_VISIBLE) no tab is built, and a control change rebuilds only the ranking."""
    cb = RunCallbacks(ctx)
    view = RunView(runs=("dsr1",), at=40.0)
    shown = _store_data(run_layout(ctx, "?" + view.query()), Id.TABLES_SHOWN)
    assert shown == {"at": view.data_key()}
    with pytest.raises(PreventUpdate):  # the ranking of the layout is the view's: nothing to do
        cb.on_tables(*_controls(view.controls()), None, shown)
    narrowed = view.replace(offload=("dram",))
    *bodies, at, after = cb.on_tables(*_controls(narrowed.controls()), None, shown)
    assert all(b is no_update for b in bodies) and after == {"at": narrowed.data_key()}
    assert "TP4 EP4 | no spec | kv dram" in _text(at)
    # scrolled into view: the open tab (points) is built, the ranking is not built again
    *bodies, at, after = cb.on_tables(*_controls(narrowed.controls()), 1, after)
    assert at is no_update and bodies[0] is not no_update
    assert all(b is no_update for b in bodies[1:])
    assert after == {"at": narrowed.data_key(), "points": narrowed.data_key()}


def test_the_points_grid_gets_only_the_columns_it_shows(ctx: AppContext) -> None:
    body = points_body(ctx.source.run_data(RunView(runs=("dsr1",))), RunView(runs=("dsr1",)))
    grid = body[-1]
    fields = [d["field"] for d in grid.columnDefs]
    assert fields == [c for c in KEY_POINT_COLUMNS if c in fields]
    assert len(grid.rowData) == 44
    assert set(grid.rowData[0]) == {*fields, "point_id"}  # the row id pins and launches points


def test_clicking_a_point_pins_it_with_every_column(ctx: AppContext) -> None:
    data = ctx.source.run_data(RunView(runs=("dsr1",)))
    row = data.verdict_points.row(0, named=True)
    click = {"points": [{"customdata": [row["point_id"], "dsr1"]}]}
    assert RunCallbacks.on_chart_click(click) == row["point_id"]
    assert RunCallbacks.on_chart_click(None) is no_update
    assert RunCallbacks.on_row_click({"rowId": row["point_id"]}) == row["point_id"]
    values, ids = _controls(RunView(runs=("dsr1",), point=row["point_id"]).controls())
    text = _text(RunCallbacks(ctx).on_point(row["point_id"], values, ids))
    assert row["arm_label"] in text and row["verdict"] in text and "p90_ttft (s)" in text
    assert "no server-metric time series" in text


def test_legend_clicks_write_hidden_arms() -> None:
    tokens = {"main": ["envelope~r", "a~r"], "second": []}
    assert RunCallbacks.on_legend([{"visible": ["legendonly"]}, [1]], tokens, []) == ["a~r"]


def test_display_only_changes_patch_the_drawn_charts(ctx: AppContext) -> None:
    cb = RunCallbacks(ctx)
    view = RunView(runs=("dsr1",))
    first = cb.on_controls(
        *_controls(view.controls()), "?unofficialRun=dsr1&y=output_tput_per_gpu", None
    )
    tokens = first[3]
    hidden = tokens["main"][2]
    out = cb.on_controls(
        *_controls(view.replace(logy=True, hide=(hidden,)).controls()), "?" + view.query(), tokens
    )
    assert out[0] == f"?unofficialRun=dsr1&hide={hidden}&logy=1" and out[3] is no_update
    ops = {
        tuple(op["location"]): op["params"]["value"] for op in out[2].to_plotly_json()["operations"]
    }
    assert ops[("layout", "yaxis", "type")] == "log"
    assert ops[("data", 2, "visible")] == "legendonly" and ops[("data", 0, "visible")] is True
    neutral = cb.on_controls(
        *_controls(view.replace(tab="al").controls()), "?" + view.query(), tokens
    )
    assert neutral[2] is no_update and neutral[3] is no_update


def test_a_change_only_one_chart_draws_leaves_the_other_alone(ctx: AppContext) -> None:
    """The main chart draws no x2 and the second chart no x (nor the "rank arms at" line): a
    change of one redraws its own chart and answers nothing for the other, which keeps the
    figure it shows; the next change is judged against what each chart shows."""
    cb = RunCallbacks(ctx)
    view = RunView(runs=("dsr1",))
    page = run_layout(ctx, "?" + view.query())
    tokens = _store_data(page, Id.SECOND_TOKENS)
    main_tokens = _store_data(page, Id.TRACE_TOKENS)
    x2 = view.replace(x2="p90_ttft")
    out = cb.on_controls(*_controls(x2.controls()), "?" + view.query(), main_tokens)
    assert out[0] == "?unofficialRun=dsr1&x2=p90_ttft"
    assert out[2] is no_update and out[3] is no_update  # the main chart as it is
    fig, built = cb.on_second(*_controls(x2.controls()), 1, tokens)
    assert fig == second_figure(ctx.source.run_data(x2), x2)
    assert fig["layout"]["xaxis"]["title"]["text"] == "TTFT, p90 (s)"
    # a new x (and "rank arms at"): the main chart's; the second chart keeps its figure
    x = x2.replace(x="p90_intvty", at=30.0)
    out = cb.on_controls(*_controls(x.controls()), "?" + x2.query(), main_tokens)
    assert out[0] == "?unofficialRun=dsr1&x=p90_intvty&x2=p90_ttft&at=30"
    assert (
        out[2]["layout"]["xaxis"]["title"]["text"] == "Interactivity, p90 (slow tail) (tok/s/user)"
    )
    with pytest.raises(PreventUpdate):
        cb.on_second(*_controls(x.controls()), 1, built)
    # then a filter: both, each for the whole view (the second chart's built query is x2's)
    narrowed = x.replace(offload=("dram",))
    fig, again = cb.on_second(*_controls(narrowed.controls()), 1, built)
    assert fig == second_figure(ctx.source.run_data(narrowed), narrowed)
    assert again["query"] == narrowed.query()


def test_index_filters_and_selection(ctx: AppContext) -> None:
    cb = IndexCallbacks(ctx)
    search, rows, _exports, _pager = cb.on_filters(
        *_controls(IndexView(q="dsr1").controls(), INDEX_CONTROL)
    )
    assert search == "?q=dsr1" and [r["run_id"] for r in rows] == ["dsr1-rerun", "dsr1"]
    assert rows[0]["_href"] == "/inference?unofficialRun=dsr1-rerun"
    links = str(cb.on_select([{"run_id": "dsr1"}, {"run_id": "dsr1-rerun"}]))
    assert (
        "/compare?base=dsr1&candidate=dsr1-rerun" in links
        and "/inference?unofficialRun=dsr1,dsr1-rerun" in links
    )


def test_compare_controls_write_the_url(ctx: AppContext) -> None:
    view = CompareView(base="dsr1", candidate="dsr1-rerun", logy=True)
    search, body = CompareCallbacks(ctx).on_compare(*_controls(view.controls(), COMPARE_CONTROL))
    assert search == "?base=dsr1&candidate=dsr1-rerun&logy=1"
    assert "paretolens compare: `dsr1` → `dsr1-rerun`" in _text(body)


def test_fetch_refused_when_off(ctx: AppContext) -> None:
    log, stop, state = FetchCallbacks(ctx).on_start(1, ["29820102138"], None)
    assert (stop, state) == (True, "refused") and "no GitHub token" in log


def test_launch_refused_when_off(ctx: AppContext) -> None:
    values, ids = _controls(RunView(runs=("dsr1",)).controls())
    result, token = LaunchCallbacks(ctx).on_launch(
        1, "pruned", "local", "", "guess", None, values, ids
    )
    assert token == "" and "Not launched: launching is disabled" in _text(result)


def test_jobs_tick_lists_jobs(ctx: AppContext) -> None:
    table, detail = JobsCallbacks(ctx).on_tick(1, "")
    assert "No jobs yet" in _text(table) and isinstance(detail, html.Div)


def test_the_second_chart_is_in_the_first_layout_then_follows_every_change(
    ctx: AppContext,
) -> None:
    """An SVG second chart is in the first layout with its tokens (nothing to ask for once the
    main chart is drawn); without them (a WebGL chart) on_second waits for the main chart's
    draw (SECOND_WANTED), then sends the whole figure; then per change a patch, a new figure or
    nothing."""
    cb = RunCallbacks(ctx)
    view = RunView(runs=("dsr1",))
    values, ids = _controls(view.controls())
    data = ctx.source.run_data(view)
    page = run_layout(ctx, "?" + view.query())
    tokens = _store_data(page, Id.SECOND_TOKENS)
    # an SVG chart (44 points): drawn with the page, nothing left for deferred.js to draw
    assert _component(page, Id.SECOND_CHART).figure == second_figure(data, view)
    assert _store_data(page, Id.SECOND_FIGURE) is None
    with pytest.raises(PreventUpdate):
        cb.on_second(values, ids, None, tokens)
    with pytest.raises(PreventUpdate):
        cb.on_second(values, ids, None, None)
    fig, built = cb.on_second(values, ids, 1, None)
    assert fig == second_figure(data, view) and {**built, "stored": False} == tokens
    assert built["query"] == view.query() and tokens["stored"] is False
    # the store is empty until a change: a display-only one sends the whole figure, not a patch
    logy = view.replace(logy=True)
    whole, _ = cb.on_second(*_controls(logy.controls()), None, tokens)
    assert whole == second_figure(ctx.source.run_data(logy), logy)
    # every one of the 44 points, in its arm's trace (labelled), beside each arm's one-point trace
    labelled = [len(t["x"]) for t in fig["data"] if t["mode"] == "markers+text"]
    assert sum(labelled) == 44 and len(built["second"]) == len(fig["data"])
    # the frame in the first layout is the figure's own layout: nothing moves when it arrives
    for v in (view, view.replace(logx=True, logy=True), view.replace(x2="p90_ttft")):
        d = ctx.source.run_data(v)
        assert second_frame(d, v) == {"data": [], "layout": second_figure(d, v)["layout"]}
    # display only: a patch of the drawn figure, for the view it now shows
    hidden = built["second"][2]
    shown = view.replace(logy=True, hide=(hidden,))
    patch, again = cb.on_second(*_controls(shown.controls()), 1, built)
    ops = {tuple(o["location"]): o["params"]["value"] for o in patch.to_plotly_json()["operations"]}
    assert ops[("layout", "yaxis", "type")] == "log" and ops[("data", 2, "visible")] == "legendonly"
    assert again == {**built, "query": shown.query()}
    # neither chart changes (a table tab), or the page reloads (another run set): nothing
    for same in (shown.replace(tab="al"), RunView(runs=("dsr1", "dsr1-rerun"))):
        with pytest.raises(PreventUpdate):
            cb.on_second(*_controls(same.controls()), 1, again)
    # a filter: the new figure
    narrowed = shown.replace(offload=("dram",))
    fig, built = cb.on_second(*_controls(narrowed.controls()), 1, again)
    assert fig == second_figure(ctx.source.run_data(narrowed), narrowed)
    assert built["query"] == narrowed.query()
