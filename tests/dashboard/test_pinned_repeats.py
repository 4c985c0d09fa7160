"""Issue 23, item 3 in the run page: a point made of several measurements shows, in the
pinned-point panel, its repeat count, the spread of its total throughput and each underlying
measurement (as `paretolens points --repeats` lists them).

Input: tests/fixtures/wild/sglang_bench_serving/datacrunch_h200_llama33_70b_offline.jsonl, a real
`sglang.bench_serving --output-file` file whose lines 4 and 5 are the same command run twice and
appended (PROVENANCE.md there).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from dashboard.pages import run_panels
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store
from tests.dashboard.tree import text as _text
from views.query.state import RunView
from views.source import DataSource

JSONL = (
    Path(__file__).resolve().parent.parent
    / "fixtures"
    / "wild"
    / "sglang_bench_serving"
    / "datacrunch_h200_llama33_70b_offline.jsonl"
)


@pytest.fixture(scope="module")
def panel_source(tmp_path_factory: pytest.TempPathFactory) -> DataSource:
    store = Store(tmp_path_factory.mktemp("repeats") / "s")
    ingest_paths([JSONL], store, run_id="off")
    return DataSource(store)


def _panel(source: DataSource, point: str) -> str:
    view = RunView.parse("unofficialRun=off")[0].replace(point=point)
    return _text(run_panels.detail_panel(source.run_data(view), view))


def test_the_pinned_panel_shows_a_repeated_points_count_spread_and_each_measurement(
    panel_source: DataSource,
) -> None:
    lines = [json.loads(x) for x in JSONL.read_text().splitlines()]
    l4, l5 = lines[3], lines[4]

    def total(x: dict[str, float]) -> float:
        return (x["total_input_tokens"] + x["total_output_tokens"]) / x["duration"]

    t4, t5 = total(l4), total(l5)  # 3857692 tokens in 459.34 s and in 459.93 s
    assert (round(t4, 2), round(t5, 2)) == (8398.34, 8387.51)
    pts = panel_source.store.points(["off"])
    (pid,) = pts.filter(pl.col(Col.REPEATS) == 2).get_column(Col.POINT_ID).to_list()
    text = _panel(panel_source, pid)
    assert "Repeats (2)" in text
    spread = abs(t4 - t5) / ((t4 + t5) / 2)  # 0.001289...
    assert f"total throughput spread {spread:.4%}" in text
    assert "total throughput spread 0.1289%" in text
    # Each measurement, numbered as `points --repeats` numbers them, with its own values.
    row = re.compile(r"(\d) datacrunch_h200_llama33_70b_offline\.jsonl ([\d.]+) ([\d.]+) ([\d.]+)")
    got = [(int(n), float(a), float(b), float(c)) for n, a, b, c in row.findall(text)]
    assert got == [
        (1, 8398.34, round(l4["output_throughput"], 2), round(l4["median_ttft_ms"] / 1000, 3)),
        (2, 8387.51, round(l5["output_throughput"], 2), round(l5["median_ttft_ms"] / 1000, 3)),
    ]


def test_a_point_of_one_measurement_shows_no_repeats(panel_source: DataSource) -> None:
    pts = panel_source.store.points(["off"])
    pid = pts.filter(pl.col(Col.REPEATS).is_null()).get_column(Col.POINT_ID)[0]
    text = _panel(panel_source, pid)
    assert "Every column" in text and "Repeats (" not in text
