"""Post-cliff detection on the real DeepSeek-R1 B200 sweep, plus the rule edges."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

from analysis.frontier.cliff import CliffParams, detect_cliffs
from ingest.contract.col import Col
from tests.analysis.pointdata import frame, row


def _arm(points: pl.DataFrame, tp: int, kv: str) -> list[tuple[int, int | None, bool, str | None]]:
    arm = points.filter((pl.col(Col.TP) == tp) & (pl.col(Col.KV_OFFLOADING) == kv))
    out = arm.select(Col.CONC).hstack(detect_cliffs(arm).drop(Col.POINT_ID)).sort(Col.CONC)
    return [tuple(r) for r in out.iter_rows()]  # type: ignore[misc]


def test_dsr1_tp4_offload_off(points: Callable[..., pl.DataFrame]) -> None:
    # tput_per_gpu by users: 489.0, 739.8, 1432.9, 1814.4 (c8), then 812.6 at c12: the first step
    # that gains < 5% (812.6 < 1.05 x 1814.4), so the knee is c8. Knee p90 TTFT 1.6057 s, so the
    # TTFT limit is max(10 x 1.6057, 10) = 16.06 s.
    # c12: 812.6 < 0.95 x 1814.4 = 1723.6 and 858.7 s > 16.1 s.
    # c16 recovers: 2216.4 > 1814.4 and 3.47 s < 16.1 s, so it is not post-cliff.
    # c24..c256: below 0.95 x 2216.4 (c16) = 2105.6 and TTFT 104..591 s.
    e = "p90 TTFT {} s > 16.1 s (10 x knee c8)"
    assert _arm(points("dsr1"), 4, "none") == [
        (1, 8, False, None),
        (2, 8, False, None),
        (4, 8, False, None),
        (8, 8, False, None),
        (12, 8, True, "tput 812.6 < 0.95 x 1814.4 (c8); " + e.format("858.7")),
        (16, 8, False, None),
        (24, 8, True, "tput 1493.9 < 0.95 x 2216.4 (c16); " + e.format("103.8")),
        (32, 8, True, "tput 621.7 < 0.95 x 2216.4 (c16); " + e.format("425.3")),
        (48, 8, True, "tput 1558.8 < 0.95 x 2216.4 (c16); " + e.format("324.7")),
        (64, 8, True, "tput 1600.9 < 0.95 x 2216.4 (c16); " + e.format("504.9")),
        (128, 8, True, "tput 1427.4 < 0.95 x 2216.4 (c16); " + e.format("591.1")),
        (256, 8, True, "tput 1198.1 < 0.95 x 2216.4 (c16); " + e.format("497.4")),
    ]


def test_dsr1_tp8_offload_off_uses_the_ttft_floor(points: Callable[..., pl.DataFrame]) -> None:
    # 266.8 -> 577.3 (c2) -> 520.3 (c4): knee c2. Knee p90 TTFT 0.934 s, 10 x 0.934 < 10 s, so
    # the 10 s floor is the limit. c4: 520.3 < 0.95 x 577.3 = 548.5 (TTFT 6.5 s is fine).
    # c8: 677.6 is a new best, but its p90 TTFT 11.8 s > 10 s. c128: 999.4 best yet, TTFT 543 s.
    got = {c: ev for c, _, post, ev in _arm(points("dsr1"), 8, "none") if post}
    assert got[4] == "tput 520.3 < 0.95 x 577.3 (c2)"
    assert got[8] == "p90 TTFT 11.8 s > 10 s floor"
    assert got[128] == "p90 TTFT 542.9 s > 10 s floor"
    assert got[256] == "tput 601.9 < 0.95 x 999.4 (c128); p90 TTFT 523.5 s > 10 s floor"
    assert sorted(got) == [4, 8, 12, 16, 32, 64, 128, 256, 512]


def _synthetic(
    tputs: list[float], ttfts: list[float], errors: list[float] | None = None
) -> pl.DataFrame:
    rows = []
    for i, (t, f) in enumerate(zip(tputs, ttfts, strict=True)):
        err = (errors or [0.0] * len(tputs))[i]
        rows.append(row(conc=2**i, tp=8, tput_per_gpu=t, p90_ttft=f, median_intvty=100.0 / (i + 1),
                        error_rate=err))  # fmt: skip
    return frame(rows)


def test_an_arm_whose_throughput_keeps_rising_has_no_knee() -> None:
    c = detect_cliffs(_synthetic([100, 200, 300, 400], [1, 50, 200, 900]))
    assert c.get_column("knee_conc").to_list() == [None] * 4
    assert c.get_column("post_cliff").to_list() == [False] * 4


def test_error_rate_past_the_knee_is_post_cliff() -> None:
    # knee at c2 (300 -> 305 gains < 5%); c4 has 7% errors > 5%
    c = detect_cliffs(_synthetic([100, 300, 305], [1, 1, 1], [0.0, 0.0, 0.07]))
    assert c.get_column("cliff_evidence").to_list() == [None, None, "error rate 0.07 > 0.05"]


def test_thresholds_are_parameters() -> None:
    pts = _synthetic([100, 300, 280], [1, 1, 1])
    # 280 < 0.95 x 300 = 285: post-cliff by default, not with a 0.9 fraction (270)
    assert detect_cliffs(pts).get_column("post_cliff").to_list() == [False, False, True]
    loose = CliffParams(tput_fraction=0.9)
    assert detect_cliffs(pts, loose).get_column("post_cliff").to_list() == [False, False, False]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tput": Col.P90_TTFT}, "higher-is-better"),
        ({"ttft": Col.TPUT_PER_GPU}, "lower-is-better"),
        ({"tput_fraction": 1.5}, "tput_fraction"),
    ],
)
def test_bad_params_are_rejected(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CliffParams(**kwargs)  # type: ignore[arg-type]
