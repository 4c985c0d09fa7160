"""The run page's charts are decided in `views.charts` before they are drawn: the info of the
DSR1 B200 multi-turn sample (44 points, 4 arms: TP4/TP8 x KV offload none/DRAM) at at=40."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ingest.store import Store
from paretolens.commands.common import seed_samples
from views.charts import main_chart, second_chart
from views.query.state import RunView
from views.source import DataSource

QUERY = "unofficialRun=dsr1-b200-multiturn&at=40&ab=kv_offloading&labels=gpus&logx=1"


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> DataSource:
    root: Path = tmp_path_factory.mktemp("store")
    seed_samples(Store(root))
    return DataSource(Store(root))


def _verdicts(plane: pl.DataFrame) -> dict[str, int]:
    return dict(plane.group_by("verdict").len().iter_rows())


def test_the_main_chart_info(source: DataSource) -> None:
    view, notes = RunView.parse(QUERY)
    assert notes == []
    info = main_chart(source.run_data(view), view, title="a title")
    assert (info.x, info.y, info.runs, info.at, info.labels, info.logx, info.logy) == (
        "median_intvty", "tput_per_gpu", ("dsr1-b200-multiturn",), 40.0, "gpus", True, False,
    )  # fmt: skip
    assert (info.title, info.legend, info.baseline, info.y_title, info.pinned) == (
        "a title", True, None, None, None,
    )  # fmt: skip
    # 44 points: 8 on their group's frontier, 8 dominated, 28 past their arm's cliff
    assert _verdicts(info.plane) == {"frontier": 8, "dominated": 8, "post_cliff": 28}
    # one polyline per arm (5, 5, 3 and 2 points) and one group envelope
    assert sorted(len(f.xs) for f in info.arm_frontiers) == [2, 3, 5, 5]
    assert len(info.group_frontiers) == 1
    assert sorted(info.arm_order.values()) == [0, 1, 2, 3]


def test_the_second_chart_info(source: DataSource) -> None:
    view, _ = RunView.parse(QUERY)
    info = second_chart(source.run_data(view), view)
    # against E2E latency, without a legend, a baseline or the "rank at x" line
    assert (info.x, info.y, info.at, info.legend, info.baseline) == (
        "median_e2el", "tput_per_gpu", None, False, None,
    )  # fmt: skip
    assert _verdicts(info.plane) == {"frontier": 5, "dominated": 11, "post_cliff": 28}
    assert sorted(len(f.xs) for f in info.arm_frontiers) == [1, 2, 5, 5]
