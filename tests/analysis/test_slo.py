"""Frontiers under a latency/error SLO (analysis.frontier.slo), on the real DeepSeek-R1 B200 sweep."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

from analysis.comparison.compare import compare_runs, comparison_markdown
from analysis.frontier.prune import analyze_points
from analysis.frontier.slo import parse_slo
from analysis.sweep.export import search_space
from analysis.sweep.pruned import prune_list, pruned_json
from ingest.contract.col import Col

SLO = "p90_ttft<=1.5"


def _by(table: pl.DataFrame, points: pl.DataFrame) -> dict[tuple[str, int], tuple[str, str]]:
    t = table.join(points.select(Col.POINT_ID, Col.P90_TTFT), on=Col.POINT_ID)
    return {
        (r[Col.ARM_LABEL], r[Col.CONC]): (r["verdict"], r["reason"])
        for r in t.iter_rows(named=True)
    }


def test_points_that_break_the_slo_leave_the_frontier(points: Callable[..., pl.DataFrame]) -> None:
    pts = points("dsr1")
    got = _by(analyze_points(pts, slo=parse_slo(SLO)).table, pts)
    dram, none = "TP4 EP4 | no spec | kv dram", "TP4 EP4 | no spec | kv none"
    # p90 TTFT above 1.5 s: TP4 dram c2 1.574, c8 1.594, c16 3.046; TP4 none c2 1.743, c8 1.606,
    # c16 3.471 (all frontier or dominated without an SLO)
    assert got[(dram, 2)] == ("out_of_slo", "p90_ttft 1.5738 > 1.5 (SLO)")
    assert got[(none, 16)] == ("out_of_slo", "p90_ttft 3.4709 > 1.5 (SLO)")
    out = {k for k, (v, _) in got.items() if v == "out_of_slo"}
    assert out == {(dram, 2), (dram, 8), (dram, 16), (none, 2), (none, 8), (none, 16)}
    # with them gone, TP4 dram c12 (33.93 tok/s/user, 2097.1 tok/s/GPU) and TP8 dram c4
    # (95.12, 747.2) are no longer dominated
    assert got[(dram, 12)][0] == "frontier"
    assert got[("TP8 EP8 | no spec | kv dram", 4)][0] == "frontier"


def test_the_slo_frontier_is_the_pareto_set_of_the_points_within_it(
    points: Callable[..., pl.DataFrame],
) -> None:
    # Oracle: an O(n^2) non-dominated filter over the points judged without the SLO (frontier
    # or dominated) that meet it; the group is the whole run here (one model, hw, isl/osl).
    pts = points("dsr1")
    plain = analyze_points(pts).table.join(pts.select(Col.POINT_ID, Col.P90_TTFT), on=Col.POINT_ID)
    ok = plain.filter(
        pl.col("verdict").is_in(["frontier", "dominated"]) & (pl.col(Col.P90_TTFT) <= 1.5)
    )
    rows = list(zip(ok[Col.POINT_ID], ok["x"], ok["y"], strict=True))
    expected = {
        pid
        for pid, x, y in rows
        if not any((x2 >= x and y2 >= y and (x2 > x or y2 > y)) for _, x2, y2 in rows)
    }
    table = analyze_points(pts, slo=parse_slo(SLO)).table
    assert set(table.filter(pl.col("verdict") == "frontier")[Col.POINT_ID]) == expected


def test_the_pruned_list_and_the_pr_markdown_state_the_slo(
    points: Callable[..., pl.DataFrame],
) -> None:
    pts = points("dsr1")
    a = analyze_points(pts, slo=parse_slo(SLO))
    pruned = prune_list(a)
    assert pruned_json(pruned)["slo"] == "p90_ttft <= 1.5 s"
    assert "out_of_slo" not in set(pruned.kept["verdict"])
    assert search_space(pruned).yaml().startswith("# kept points meet the SLO p90_ttft <= 1.5 s\n")
    both = pl.concat([pts, pts.with_columns(pl.lit("pr").alias(Col.RUN_ID))])
    md = comparison_markdown(compare_runs(both, "dsr1", "pr", slo=parse_slo(SLO)))
    assert "only points within the SLO p90_ttft <= 1.5 s" in md


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("p90_ttft<2", "expected column<=value"),
        ("p90_ttft>=2", "p90_ttft is better lower"),
        ("median_intvty<=20", "median_intvty is better higher"),
        ("model<=3", "not a metric"),
    ],
)
def test_a_bad_slo_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_slo(text)


def test_slo_text_round_trips() -> None:
    slo = parse_slo(" p90_ttft <= 2 , p90_tpot<=0.05,error_rate<=0.01,median_intvty>=20")
    assert slo.text() == "p90_ttft<=2,p90_tpot<=0.05,error_rate<=0.01,median_intvty>=20"
    assert parse_slo(slo.text()) == slo
