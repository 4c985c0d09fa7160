"""Figure builders as plain functions over the real fixture analysis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.figures import frontier, series, style, updates
from dashboard.pages.run_charts import main_figure
from ingest.contract.col import Col
from ingest.contract.schema import SeriesCol
from views.charts import FrontierChart
from views.facets import ARM_NAME
from views.query.state import RunView
from views.run_data import RunData
from views.source import DataSource

DSR1 = RunView(runs=("dsr1",))
ARMS = [
    "TP4 EP4 | no spec | kv dram",
    "TP4 EP4 | no spec | kv none",
    "TP8 EP8 | no spec | kv dram",
    "TP8 EP8 | no spec | kv none",
]


def _run(source: DataSource, view: RunView = DSR1) -> RunData:
    return source.run_data(view)


class _T:
    """Attribute access to a trace or layout dict (a missing key reads as None)."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.__dict__["d"] = d

    def __getattr__(self, name: str) -> Any:
        v = self.d.get(name)
        return _T(v) if isinstance(v, dict) else v


def _data(fig: dict[str, Any]) -> list[_T]:
    return [_T(t) for t in fig["data"]]


def _layout(fig: dict[str, Any]) -> _T:
    return _T(fig["layout"])


def _points(fig: dict[str, Any]) -> list[_T]:
    return [
        t
        for t in _data(fig)
        if t.mode and "markers" in t.mode and t.meta != "pinned" and t.x != [None]
    ]


def test_one_point_trace_and_one_frontier_line_per_arm_plus_the_envelope(
    source: DataSource,
) -> None:
    fig = main_figure(_run(source), DSR1)
    assert [t.name for t in _points(fig)] == ARMS
    lines = [t for t in _data(fig) if t.mode == "lines"]
    assert [t.name for t in lines] == ["group envelope", *ARMS]
    assert sum(len(t.x) for t in _points(fig)) == 44
    assert _layout(fig).xaxis.title.text == "Interactivity, median (tok/s/user)"
    assert _layout(fig).yaxis.title.text == "Total tok/s/GPU (tok/s/GPU)"


def test_the_envelopes_of_one_run_are_one_trace_and_one_legend_entry(source: DataSource) -> None:
    # the MTP run has two comparison groups (1k/1k: one point, 8k/1k: two), so two envelopes,
    # drawn as one trace with a gap between them (one plotly trace per run, not per group)
    view = RunView(runs=("mtp",))
    run = _run(source, view)
    env = [t for t in _data(main_figure(run, view)) if t.name == "group envelope"]
    assert [(t.legendgroup, t.showlegend) for t in env] == [("envelope~mtp", True)]
    xs = list(env[0].x)
    gap = xs.index(None)
    assert xs.count(None) == 1 and sorted([gap, len(xs) - gap - 1]) == [1, 2]
    # the same points as the analysis' group frontiers, in their order
    want = [x for fr in run.analysis.group_frontiers for x in (*fr.xs, None)][:-1]
    assert xs == want


def test_verdicts_set_opacity_and_shape(source: DataSource) -> None:
    fig = main_figure(_run(source), DSR1)
    seen = set()
    for trace in _points(fig):
        for verdict_text, symbol, opacity in zip(
            (c[4] for c in trace.customdata), trace.marker.symbol, trace.marker.opacity, strict=True
        ):
            seen.add((verdict_text, symbol, opacity))
    assert ("frontier", "circle", 1.0) in seen
    assert ("dominated", "circle", 0.35) in seen
    assert ("post_cliff", "circle-open", 0.9) in seen


def test_concurrency_labels_and_hover_carry_config_requests_and_al(source: DataSource) -> None:
    trace = _points(main_figure(_run(source), DSR1))[0]
    assert list(trace.text) == [str(c[3]) for c in trace.customdata]
    assert (
        "requests successful/total" in trace.hovertemplate
        and "AL: %{customdata[8]}" in trace.hovertemplate
    )
    assert trace.customdata[0][8] == "not measured"
    assert "b200 · vllm · fp4 · 4 GPUs" in trace.customdata[0][9]


def test_hidden_arms_stay_in_the_legend_as_legend_only(source: DataSource) -> None:
    arm = _run(source).facets["arm"][0].value
    fig = main_figure(_run(source), DSR1.replace(hide=(style.token(arm, "dsr1"),)))
    hidden = {t.name for t in _data(fig) if t.visible == "legendonly"}
    assert hidden == {ARMS[0]}


def test_hide_non_frontier_keeps_only_frontier_points(source: DataSource) -> None:
    fig = main_figure(_run(source), DSR1.replace(frontier_only=True))
    drawn = [c[4] for t in _points(fig) for c in t.customdata]
    assert drawn and set(drawn) <= {"frontier", "dominated"}
    assert len(drawn) < 44


def test_log_axes_target_line_and_pinned_ring(source: DataSource) -> None:
    pid = _run(source).points.get_column(Col.POINT_ID)[0]
    fig = main_figure(_run(source), DSR1.replace(logx=True, logy=True, at=40.0, point=pid))
    assert (_layout(fig).xaxis.type, _layout(fig).yaxis.type) == ("log", "log")
    assert _layout(fig).shapes[0]["x0"] == 40.0
    assert [t.meta for t in _data(fig)][-1] == "pinned"


def test_webgl_and_no_labels_past_the_threshold(source: DataSource) -> None:
    d = _run(source)
    plane = pl.concat(
        [d.main_plane.with_columns(pl.col(Col.POINT_ID) + f"-{i}") for i in range(25)]
    )
    fig = frontier.frontier_figure(
        FrontierChart(
            plane,
            d.analysis.arm_frontiers,
            d.analysis.group_frontiers,
            x=DSR1.x,
            y=DSR1.y,
            runs=DSR1.runs,
            arm_order=d.arm_order,
        )
    )
    pts = [t for t in _data(fig) if t.type == "scattergl"]
    assert len(pts) == 4 and sum(len(t.x) for t in pts) == 1100
    assert all(t.mode == "markers" for t in pts)


def test_strings_from_result_files_are_escaped(source: DataSource) -> None:
    d = _run(source)
    plane = d.main_plane.with_columns(pl.lit("<a href='javascript:x'>TP8</a>").alias(ARM_NAME))
    fig = frontier.frontier_figure(
        FrontierChart(plane, (), (), x=DSR1.x, y=DSR1.y, runs=DSR1.runs, arm_order={})
    )
    trace = _points(fig)[0]
    assert trace.name == "&lt;a href='javascript:x'&gt;TP8&lt;/a&gt;"
    assert trace.customdata[0][2] == trace.name


def test_several_runs_get_their_own_marker_and_dash(source: DataSource) -> None:
    view = RunView(runs=("dsr1", "dsr1-rerun"))
    fig = main_figure(source.run_data(view), view)
    symbols = {s.removesuffix("-open") for t in _points(fig) for s in t.marker.symbol}
    assert symbols == {"circle", "square"}
    assert {t.line.dash for t in _data(fig) if t.mode == "lines" and t.showlegend is False} == {
        "solid",
        "dash",
    }
    assert all(" · run " in t.name for t in _points(fig))


def test_legend_clicks_become_hidden_tokens() -> None:
    tokens = ["envelope~r", "a~r", "a~r", "b~r", "pinned"]
    assert updates.hidden_after_restyle([{"visible": ["legendonly"]}, [1, 2]], tokens, []) == [
        "a~r"
    ]
    assert updates.hidden_after_restyle([{"visible": [True]}, [1, 2]], tokens, ["a~r", "b~r"]) == [
        "b~r"
    ]
    isolate = [{"visible": ["legendonly", True, True, "legendonly", True]}, [0, 1, 2, 3, 4]]
    assert updates.hidden_after_restyle(isolate, tokens, []) == ["envelope~r", "b~r"]
    assert updates.hidden_after_restyle([{"marker.size": [3]}, [1]], tokens, ["b~r"]) == ["b~r"]
    assert updates.hidden_after_restyle(None, tokens, ["b~r"]) == ["b~r"]


def test_series_figure_draws_one_panel_per_metric() -> None:
    assert (
        series.series_figure(pl.DataFrame(schema={c.value: pl.String for c in SeriesCol})) is None
    )
    rows = [
        {
            "run_id": "r",
            "point_id": "p",
            "metric": m,
            "labels": labels,
            "t": float(t),
            "value": float(t * k),
        }
        for m, labels, k in (
            ("vllm:num_requests_running", '{"engine": "0"}', 1),
            ("vllm:kv_cache_usage_perc", "{}", 0.01),
        )
        for t in range(5)
    ]
    fig = series.series_figure(pl.DataFrame(rows))
    assert fig is not None
    assert [a.text for a in fig.layout.annotations] == [
        "vllm:kv_cache_usage_perc",
        "vllm:num_requests_running",
    ]
    assert len(fig.data) == 2


def test_compare_figure_dashes_the_base(source: DataSource) -> None:
    from dashboard.pages.compare import compare_figure
    from views.query.state import CompareView

    view = CompareView(base="dsr1", candidate="dsr1-rerun")
    fig = compare_figure(source.compare_data(view), view)
    dashes = {t.line.dash for t in _data(fig) if t.mode == "lines"}
    assert dashes == {"dash", "solid"}
    assert sorted({t.name.rsplit(" · ", 1)[1] for t in _data(fig) if t.mode == "markers"}) == [
        "base",
        "candidate",
    ]


def test_the_compare_chart_has_the_log_axes_of_the_page_asked_for(tmp_path: Path) -> None:
    """A comparison's data is kept for every view that differs only in its log axes: a page
    opened with log y, then the same page without it (or with log x), draws each its own axes,
    whichever was asked for first."""
    from dashboard.pages import compare as page
    from tests.dashboard.conftest import build_store
    from views.query.state import CompareView

    source = DataSource(build_store(tmp_path / "store"))
    plain = CompareView(base="dsr1", candidate="dsr1-rerun")
    views = (
        plain.model_copy(update={"logy": True}),
        plain,
        plain.model_copy(update={"logx": True}),
    )
    got = []
    for view in views:
        data = source.compare_data(view)
        assert data is source.compare_data(plain)  # one comparison for the three
        layout = page.compare_figure(data, view)["layout"]
        got.append((layout["xaxis"]["type"], layout["yaxis"]["type"], layout["yaxis"]["rangemode"]))
    assert got == [
        ("linear", "log", "normal"),
        ("linear", "linear", "tozero"),
        ("log", "linear", "tozero"),
    ]


def test_arms_that_share_a_label_are_told_apart_by_what_differs(source: DataSource) -> None:
    names = dict(_run(source, RunView(runs=("mtp",))).names.iter_rows())
    assert sorted(names.values()) == [
        "1k/1k · TP8 EP1 | MTP | kv none",
        "8k/1k · TP8 EP1 | MTP | kv none",
    ]
    assert set(dict(_run(source).names.iter_rows()).values()) == set(ARMS)


def test_an_empty_chart_says_which_axis_the_points_lack(source: DataSource) -> None:
    view = RunView(runs=("mtp",))
    data = _run(source, view)
    plane = data.second_plane.with_columns(pl.lit(None, dtype=pl.Float64).alias("x"))
    fig = frontier.frontier_figure(
        FrontierChart(plane, (), (), x=view.x2, y=view.y, runs=view.runs, arm_order=data.arm_order)
    )
    notes = [a["text"] for a in fig["layout"]["annotations"]]
    assert notes == ["none of the 3 points has E2E latency, median: pick another axis"]
    fig = frontier.frontier_figure(
        FrontierChart(
            plane.clear(), (), (), x=view.x2, y=view.y, runs=view.runs, arm_order=data.arm_order
        )
    )
    assert [a["text"] for a in fig["layout"]["annotations"]] == [
        "no points to draw for these filters"
    ]


def test_points_that_break_the_slo_have_their_own_legend_entry_and_count(
    source: DataSource,
) -> None:
    # Issue 27 item 6: p90 TTFT <= 1.5 s on the DeepSeek-R1 sweep: six points break it
    # (tests/analysis/test_slo.py names them), drawn as crossed circles, none open or faded.
    view = RunView(runs=("dsr1",), slo="p90_ttft<=1.5")
    fig = main_figure(source.run_data(view), view)
    keys = [t for t in fig["data"] if str(t.get("name", "")).startswith("breaks the SLO")]
    assert [(k["name"], k["marker"]["symbol"], k.get("showlegend", True)) for k in keys] == [
        ("breaks the SLO (6 points)", style.SLO_SYMBOL, True)
    ]
    symbols = [
        (s, v)
        for t in fig["data"]
        if t.get("customdata") is not None
        for s, v in zip(t["marker"]["symbol"], (c[4] for c in t["customdata"]), strict=True)
    ]
    assert sorted(s for s, v in symbols if v == "out_of_slo") == [style.SLO_SYMBOL] * 6
    assert all(s != style.SLO_SYMBOL for s, v in symbols if v != "out_of_slo")
    plain = main_figure(source.run_data(RunView(runs=("dsr1",))), RunView(runs=("dsr1",)))
    assert not [t for t in plain["data"] if str(t.get("name", "")).startswith("breaks the SLO")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet="&<>;a lt gt amp é\u2028/", max_size=12))))
def test_escaping_in_polars_is_inert_on_every_text(texts: list[str | None]) -> None:
    """The hover fields are escaped in polars (`inert_expr`, one pass of `&`, `<`, `>`), the
    other drawn text in Python (`inert`): the same text for any value, `&lt;` and a bare `&`
    included (null: empty)."""
    got = pl.DataFrame({"t": texts}, schema={"t": pl.String}).select(style.inert_expr(pl.col("t")))
    assert got.to_series().to_list() == [style.inert(t) for t in texts]
