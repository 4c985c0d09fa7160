"""Verdicts on the real DeepSeek-R1 B200 sweep (TP4/TP8 x KV offload on/off, users 1..512)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from analysis.frontier.prune import Verdict, analyze_points
from ingest.contract.col import Col
from tests.analysis.pointdata import frame, row

DRAM4, NONE4 = "TP4 EP4 | no spec | kv dram", "TP4 EP4 | no spec | kv none"
DRAM8, NONE8 = "TP8 EP8 | no spec | kv dram", "TP8 EP8 | no spec | kv none"


@pytest.fixture(scope="module")
def dsr1(points: Callable[..., pl.DataFrame]) -> pl.DataFrame:
    return analyze_points(points("dsr1")).table


def _row(t: pl.DataFrame, label: str, conc: int) -> dict[str, object]:
    (r,) = t.filter((pl.col(Col.ARM_LABEL) == label) & (pl.col(Col.CONC) == conc)).to_dicts()
    return r


def test_every_point_gets_one_verdict(
    dsr1: pl.DataFrame, points: Callable[..., pl.DataFrame]
) -> None:
    a = analyze_points(points("dsr1"))
    # 44 points: the flat agentic reader stores no error rate (its request total includes warm-up),
    # so nothing is invalid; the cliff takes 28 (see test_cliff), 16 are judged for dominance.
    assert a.counts() == {
        "frontier": 8,
        "dominated": 8,
        "post_cliff": 28,
        "invalid": 0,
        "out_of_slo": 0,
    }
    assert dsr1.height == 44


def test_the_group_envelope(points: Callable[..., pl.DataFrame]) -> None:
    a = analyze_points(points("dsr1"))
    (front,) = a.group_frontiers
    labels = dict(
        zip(
            a.table[Col.POINT_ID],
            zip(a.table[Col.ARM_LABEL], a.table[Col.CONC], strict=True),
            strict=True,
        )
    )
    # Judged points by median_intvty descending with the running best tput_per_gpu:
    #   TP8 dram c1 (123.26, 243.0) keep; TP8 none c1 (121.98, 266.8) keep; TP4 none c1
    #   (117.44, 489.0) keep; TP8 none c2 (112.53, 577.3) keep; TP8 dram c2 (109.62, 525.0) and
    #   TP4 dram c1 (109.42, 461.0) drop; TP4 dram c2 (99.25, 881.1) keep; TP4 none c2
    #   (98.96, 739.8) drop; TP8 dram c4 (95.12, 747.2) drop; TP4 none c4 (78.60, 1432.9) keep;
    #   TP4 dram c4 (76.71, 1317.7) drop; TP4 dram c8 (55.16, 2119.5) keep; TP4 none c8 drop;
    #   TP4 dram c12 (33.93, 2097.1) drop; TP4 dram c16 (32.25, 2422.9) keep; TP4 none c16 drop.
    assert [labels[p] for p in front.point_ids] == [
        (DRAM4, 16), (DRAM4, 8), (NONE4, 4), (DRAM4, 2), (NONE8, 2), (NONE4, 1), (NONE8, 1), (DRAM8, 1),
    ]  # fmt: skip
    assert [round(v, 2) for v in front.xs] == [
        32.25,
        55.16,
        78.6,
        99.25,
        112.53,
        117.44,
        121.98,
        123.26,
    ]


def test_post_cliff_points_are_removed_before_dominance(dsr1: pl.DataFrame) -> None:
    # TP4 offload-on c32 has the highest throughput of the sweep (2463.4 tok/s/GPU at 22.13
    # tok/s/user): nothing dominates it, but its p90 TTFT is 106.9 s against 1.59 s at the knee.
    r = _row(dsr1, DRAM4, 32)
    assert (r["verdict"], r["reason"]) == ("post_cliff", "p90 TTFT 106.9 s > 15.9 s (10 x knee c8)")
    assert r["on_arm_frontier"] is False and r["dominated_by"] == []
    assert round(r["y"], 1) == 2463.4  # type: ignore[call-overload]


def test_dominated_points_name_their_dominators(dsr1: pl.DataFrame) -> None:
    # TP4 offload-off c8 (54.56, 1814.4) vs offload-on c8 (55.16, 2119.5): on is better on both.
    r = _row(dsr1, NONE4, 8)
    assert r["verdict"] == "dominated"
    assert r["reason"] == f"dominated by {DRAM4} c8 (55.16, 2119.5)"
    assert r["dominated_by"] == [_row(dsr1, DRAM4, 8)[Col.POINT_ID]]
    assert r["on_arm_frontier"] is True  # the best of its own arm at that interactivity
    # TP4 offload-on c1 (109.42, 461.0) is dominated by TP8 off c2 (112.53, 577.3) and TP4 off c1
    # (117.44, 489.0); TP8 off c1 (121.98, 266.8) has less throughput, so it does not dominate.
    r = _row(dsr1, DRAM4, 1)
    assert r["reason"] == f"dominated by {NONE8} c2 (112.53, 577.3) and 1 more"
    assert r["dominated_by"] == [
        _row(dsr1, NONE8, 2)[Col.POINT_ID],
        _row(dsr1, NONE4, 1)[Col.POINT_ID],
    ]


def test_output_rows_carry_the_issue_fields(dsr1: pl.DataFrame) -> None:
    need = {"arm_id", "arm_label", "conc", "tp", "ep", "spec_decoding", "kv_offloading", "x", "y",
            "verdict", "on_arm_frontier", "reason", "dominated_by"}  # fmt: skip
    assert need <= set(dsr1.columns)
    assert set(dsr1.get_column("verdict").unique()) <= {v.value for v in Verdict}


def test_invalid_points_error_rate_and_missing_metrics() -> None:
    base = {"conc": 1, "tp": 8, "tput_per_gpu": 100.0, "p90_ttft": 1.0, "model_prefix": "m"}
    pts = frame([
        row(**base, median_intvty=50.0, num_requests_total=100, num_requests_successful=80),
        row(**{**base, "conc": 2}, median_intvty=None, num_requests_total=10, num_requests_successful=10),
        row(**{**base, "conc": 4}, median_intvty=40.0, num_requests_total=10, num_requests_successful=0),
        row(**{**base, "conc": 8}, median_intvty=30.0, num_requests_total=100, num_requests_successful=95),
    ])  # fmt: skip
    t = analyze_points(pts).table.sort(Col.CONC)
    assert t.select("conc", "verdict", "reason").rows() == [
        (1, "invalid", "error rate 0.2 > 0.1"),  # 1 - 80/100
        (2, "invalid", "missing median_intvty"),
        (4, "invalid", "error rate 1.0 > 0.1; no successful requests"),
        (8, "frontier", "not dominated in its comparison group"),  # 5% errors pass the 10% gate
    ]


def test_the_comparison_group_is_configurable(points: Callable[..., pl.DataFrame]) -> None:
    # Grouping by TP too: TP8 on c4 (95.12, 747.2), dominated by TP4 on c2 (99.25, 881.1) in the
    # run-wide group, now has the best throughput of the TP8 group; with TP8 off c2 (112.53,
    # 577.3), off c1 (121.98, 266.8) and on c1 (123.26, 243.0) it makes the TP8 envelope.
    a = analyze_points(points("dsr1"), group_by=(Col.RUN_ID, Col.TP))
    tp8 = [f for f in a.group_frontiers if dict(f.key)[Col.TP] == 8]
    assert [f.concs for f in tp8] == [(4, 2, 1, 1)]


def test_a_failing_error_rate_past_the_knee_is_post_cliff_with_the_rate_in_its_evidence(
    tmp_path: Path,
) -> None:
    from ingest.pipeline import ingest_paths
    from ingest.store import Store

    # A real request-rate sweep of one server under vLLM and SGLang (1, 10, 20, 30, 35 req/s and
    # inf), no GPU count recorded: total throughput is the chart's y and the cliff rules read it.
    # SGLang: 1331.8 -> 10562.9 -> 19593.7 -> 19687.4 tok/s: 20 -> 30 req/s gains 0.5% < 5%, so
    # the knee is 20 req/s; past it 656 of 3600 requests failed at 30 req/s (1 - 2944/3600 =
    # 0.182) and 1257 of 4200 at 35 (0.299): the load broke the server, they are post-cliff.
    sweep = (
        Path(__file__).resolve().parents[1]
        / "fixtures/wild/vllm_bench_serve/rate_sweep_framework/fce30a0"
    )
    st = Store(tmp_path)
    ingest_paths([sweep], st, run_id="r")
    t = analyze_points(st.points(["r"]), y=Col.TOTAL_TPUT).table
    sgl = t.filter(pl.col(Col.FRAMEWORK) == "sgl").sort(Col.REQUEST_RATE)
    assert sgl.get_column(Col.REQUEST_RATE).to_list() == [1.0, 10.0, 20.0, 30.0, 35.0, math.inf]
    assert sgl.get_column("knee_conc").to_list() == [20.0] * 6
    assert sgl.get_column("verdict").to_list()[3:] == ["post_cliff"] * 3
    assert sgl.get_column("reason").to_list()[3:5] == [
        "error rate 0.182 > 0.05",
        "error rate 0.299 > 0.05",
    ]
    # Below the knee nothing failed: frontier or dominated, never invalid.
    assert set(sgl.get_column("verdict").to_list()[:3]) <= {"frontier", "dominated"}
