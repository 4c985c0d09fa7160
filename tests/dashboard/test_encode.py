"""`dashboard.encode.to_json` writes plotly's encoder's bytes: on every page layout and chart
answer of the fixture runs, and on any value a property test makes (components, escapes,
numpy, values orjson cannot write)."""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any

import numpy as np
import pytest
from dash import dcc, html
from hypothesis import given, settings
from hypothesis import strategies as st
from plotly.io.json import to_json_plotly

from dashboard import components as c
from dashboard import encode
from dashboard.app import layout_url, render
from dashboard.context import AppContext
from dashboard.pages import run as run_page
from dashboard.pages.run import RunCallbacks
from tests.dashboard.conftest import RUNS
from views.query.state import RunView

PAGES = (
    "/",
    "/inference?unofficialRun=dsr1",
    "/inference?unofficialRun=dsr1&logy=1&x2=p90_ttft&labels=tp",
    "/inference?unofficialRun=mtp&tab=deltas",
    "/inference?unofficialRun=dsr1,dsr1-rerun&envelope=all",
    "/inference?unofficialRun=dsr1&baseline=main",
    "/compare?base=dsr1&candidate=dsr1-rerun",
    "/inference?unofficialRun=not-a-run",
)


def test_every_layout_is_plotlys_bytes(client: Any, ctx: AppContext) -> None:
    """The run pages (several states), the index and the compare page: the layout request
    answers the bytes plotly's encoder writes for the page's tree, which carries the figures
    (so the walk it avoids is there to avoid)."""
    for page in PAGES:
        path, _, query = page.partition("?")
        active, content = render(ctx, path, query)
        tree = c.shell(content, active)
        want = to_json_plotly(tree)
        assert encode.to_json(tree) == want, page
        got = client.get(layout_url(page))
        assert (got.status_code, got.get_data(as_text=True)) == (200, want), page
    body = client.get(layout_url("/inference?unofficialRun=dsr1")).get_data(as_text=True)
    assert '"type":"scatter"' in body and "\\u003c" in body  # figures, and escaped markup


def test_chart_answers_are_plotlys_bytes(ctx: AppContext) -> None:
    """Both charts' answers (figures, patches, components) for a control change of every
    fixture run."""
    cb = RunCallbacks(ctx)
    for run in RUNS:
        view = RunView(runs=(run,))
        for changed in (view.replace(logy=True), view.replace(y="output_tput_per_gpu")):
            values = list(changed.controls().values())
            ids = [{"type": "control", "field": k} for k in changed.controls()]
            for out in (
                *run_page.plain_components(cb.on_controls)(values, ids, "?" + view.query(), None),
                *cb.on_second(values, ids, 1, None),
            ):
                assert encode.to_json(out) == to_json_plotly(out), run


_text = st.text(alphabet=st.sampled_from("ab</>&\u2028\u2029\"'\\é\x00 "), max_size=8)
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    _text,
    st.sampled_from([np.float64(1.5), np.int64(7), np.bool_(True), np.float32(0.25)]),
    st.sampled_from([datetime.date(2026, 12, 4), datetime.datetime(2026, 12, 4, 15, 30)]),
)


def _component(children: Any) -> Any:
    return st.builds(
        lambda kids, text, style: html.Div(
            [kids, dcc.Graph(figure={"data": [{"x": [1, 2], "text": [text]}]})],
            title=text,
            style=style,
        ),
        children,
        _text,
        st.dictionaries(_text, st.integers(0, 9), max_size=2),
    )


_values = st.recursive(
    _scalar,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4),
        st.tuples(kids, kids),
        st.dictionaries(st.one_of(_text, st.integers(0, 5)), kids, max_size=4),
        _component(kids),
        st.builds(lambda xs: np.array(xs, dtype=float), st.lists(st.floats(0, 9), max_size=3)),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_any_value_is_plotlys_bytes(value: Any) -> None:
    assert encode.to_json(value) == to_json_plotly(value)


@pytest.mark.parametrize(
    "value",
    [
        decimal.Decimal("1.25"),  # orjson cannot write it: plotly's walk makes it a float
        [html.Div(decimal.Decimal("2.5")), {"set": math.pi}],
        {"big": [10**30]},  # past 64 bits: plotly's encoder refuses it, and so does this
    ],
)
def test_values_orjson_cannot_write_go_to_plotly(value: Any) -> None:
    try:
        want = to_json_plotly(value)
    except TypeError as exc:
        with pytest.raises(TypeError, match=str(exc)[:20]):
            encode.to_json(value)
        return
    assert encode.to_json(value) == want
