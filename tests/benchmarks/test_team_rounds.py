"""The team suite's rounds of 50 users pooled into one figure (`benchmarks.suite_team.pooled`)."""

from __future__ import annotations

import pytest

from benchmarks.suite_team import _load_figures, pooled


def _round(filter_ms: list[float], started: float) -> dict[str, object]:
    return {
        "samples": [["filter_change_both", ms / 1000, 200] for ms in filter_ms]
        + [["first_render", 0.010, 200]],
        "errors": [f"export: ReadError {started}"] if started > 11 else [],
        "load": [2.0, 2.5],
        "started": started,
        "quiet": 3.0,
        "runs": ["r1", "r2"],
        "pair": ["r1", "r2"],
    }


def test_rounds_pool_their_samples_and_keep_each_rounds_p95() -> None:
    one = _round([float(v) for v in range(1, 21)], 10.0)  # 1..20 ms
    two = _round([float(v) for v in range(101, 121)], 12.0)  # 101..120 ms
    got = pooled([one, two])
    assert len(got["samples"]) == 42 and got["errors"] == ["export: ReadError 12.0"]
    assert got["started"] == [10.0, 12.0] and got["load"] == [2.0, 2.5, 2.0, 2.5]
    # nearest rank: each round's p95 is its 19th of 20 values, the figure's the 38th of all 40
    assert [r["filter_change_both"] for r in got["p95s"]] == pytest.approx([0.019, 0.119])
    (change, _render) = _load_figures(got, 30.0, "cmd")
    assert change.samples.p95() == pytest.approx(0.118)
    assert "2 rounds of 50 users" in change.notes and "filter change 119 ms" in change.notes
