"""Issue 14, item 5: InferenceX's parallelism labels on points and legends, topology on hover."""

from __future__ import annotations

from dashboard.figures import frontier
from dashboard.pages import run_charts as charts
from views.query.choices import LABEL_CHOICES
from views.query.state import RunView
from views.source import DataSource


def test_parallelism_is_a_label_choice() -> None:
    assert "parallelism" in dict(LABEL_CHOICES)
    view, notes = RunView.parse("unofficialRun=dsr1&labels=parallelism")
    assert (view.labels, notes) == ("parallelism", [])


def test_points_are_labelled_and_legends_prefixed(source: DataSource) -> None:
    view = RunView(runs=("dsr1",), labels="parallelism")
    fig = charts.main_figure(source.run_data(view), view)
    texts = {
        x for t in fig["data"] if "text" in t and isinstance(t["text"], list) for x in t["text"]
    }
    assert texts == {"TEP8", "TEP4"}  # dsr1: TP8 EP8 and TP4 EP4, no DP attention
    legends = {t["name"] for t in fig["data"] if t.get("showlegend") is not False and t.get("meta")}
    assert "TEP8 · TP8 EP8 | no spec | kv none" in legends


def test_hover_shows_the_full_topology(source: DataSource) -> None:
    view = RunView(runs=("dsr1",))
    fig = charts.main_figure(source.run_data(view), view)
    points = [t for t in fig["data"] if t.get("customdata") and t["mode"].startswith("markers")]
    topo = points[0]["customdata"][0][10]
    assert (
        topo.startswith("TEP") and "tp=" in topo and "ep=" in topo and "dp_attention=false" in topo
    )
    assert "%{customdata[10]}" in points[0]["hovertemplate"]


def test_legend_label_keeps_a_name_that_already_says_it() -> None:
    assert frontier.legend_label("TP8 EP1 | no spec", "TP8") == "TP8 EP1 | no spec"
    assert frontier.legend_label("TP8 EP8 | MTP", "DEP8") == "DEP8 · TP8 EP8 | MTP"
    assert frontier.legend_label("x", None) == "x"
