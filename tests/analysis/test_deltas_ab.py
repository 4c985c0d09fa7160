"""Single-field A/B deltas at equal concurrency, frontier deltas at matched interactivity."""

from __future__ import annotations

import json
from collections.abc import Callable

import polars as pl
import pytest

from analysis.comparison.deltas import compute_deltas, pair_arms
from analysis.frontier.interpolate import frontier_gap
from analysis.frontier.polylines import Frontier
from ingest.contract.col import Col
from tests.analysis.pointdata import frame, row


def _at(d: pl.DataFrame, base_label: str, conc: int) -> dict[str, object]:
    (r,) = d.filter(
        (pl.col("baseline_arm_label") == base_label) & (pl.col(Col.CONC) == conc)
    ).to_dicts()
    return r


def test_kv_offload_on_vs_off_on_the_dsr1_sweep(points: Callable[..., pl.DataFrame]) -> None:
    d = compute_deltas(points("dsr1"), axis=Col.KV_OFFLOADING)
    assert [(p.baseline_arm_label, p.treatment_arm_label, p.baseline_value, p.treatment_value) for p in d.pairs] == [
        ("TP4 EP4 | no spec | kv none", "TP4 EP4 | no spec | kv dram", "none", "dram"),
        ("TP8 EP8 | no spec | kv none", "TP8 EP8 | no spec | kv dram", "none", "dram"),
    ]  # fmt: skip
    # every concurrency both arms measured: TP4 has 12 common users values, TP8 has 9 (no c8/c64 with offload)
    assert d.table.height == 12 + 9
    r = _at(d.table, "TP4 EP4 | no spec | kv none", 8)
    # tput_per_gpu 1814.363939 -> 2119.510118: 100 x (2119.510118 / 1814.363939 - 1) = +16.82 %
    assert round(r["tput_per_gpu_delta_pct"], 2) == 16.82  # type: ignore[call-overload]
    assert (r["tp"], r["ep"], r["baseline_verdict"], r["treatment_verdict"]) == (
        4,
        4,
        "dominated",
        "frontier",
    )
    # the two points ran on different clusters: a confound the reviewer must see
    assert r["confounds"] == ["runner: b200-dgxc-slurm_8 vs b200-nb_1"]
    r = _at(d.table, "TP4 EP4 | no spec | kv none", 16)
    # 2216.420616 -> 2422.879351: +9.31 %; both on the dgxc cluster, different nodes
    assert round(r["tput_per_gpu_delta_pct"], 2) == 9.31  # type: ignore[call-overload]
    assert r["confounds"] == ["runner: b200-dgxc-slurm_5 vs b200-dgxc-slurm_0"]


def test_the_frontier_delta_on_dsr1_uses_only_the_common_range(
    points: Callable[..., pl.DataFrame],
) -> None:
    d = compute_deltas(points("dsr1"), axis=Col.KV_OFFLOADING)
    gap = d.gaps[0]
    assert gap is not None
    # pre-cliff arm frontiers (median_intvty): off 32.01..117.44 (c16..c1), on 32.25..109.42
    # common range [max(32.01, 32.25), min(117.44, 109.42)] = [32.25, 109.42]; compared at every
    # measured interactivity of either arm inside it
    assert (round(gap.lo, 2), round(gap.hi, 2)) == (32.25, 109.42)
    assert [round(v, 2) for v in gap.xs] == [32.25, 54.56, 55.16, 76.71, 78.6, 98.96, 99.25, 109.42]
    # PCHIP passes through the measured points: off c8 at 54.56 and on c8 at 55.16
    assert round(gap.baseline[1], 2) == 1814.36 and round(gap.treatment[2], 2) == 2119.51


def test_pchip_gap_on_straight_frontiers_is_exact() -> None:
    # baseline y = 1000 - 10x measured at x = 10, 20, 30; treatment is 1.2 x that at 15, 25, 35.
    # Collinear points make PCHIP linear, so at every x of [15, 30] the treatment is +20 %, and
    # the areas are 1.2 x each other: integral of (1000 - 10x) over [15, 30] = 15000 - 3375 = 11625.
    b = Frontier(
        (),
        "b",
        Col.MEDIAN_INTVTY,
        Col.TPUT_PER_GPU,
        ("1", "2", "3"),
        (10.0, 20.0, 30.0),
        (900.0, 800.0, 700.0),
        (1, 2, 3),
    )
    t = Frontier((), "t", Col.MEDIAN_INTVTY, Col.TPUT_PER_GPU, ("4", "5", "6"), (15.0, 25.0, 35.0), (1020.0, 900.0, 780.0), (1, 2, 3))  # fmt: skip
    gap = frontier_gap(b, t)
    assert gap is not None
    assert (gap.lo, gap.hi, gap.xs) == (15.0, 30.0, (15.0, 20.0, 25.0, 30.0))
    assert [round(v, 9) for v in gap.delta_pct] == [20.0] * 4
    assert round(gap.area_baseline, 6) == 11625.0 and round(gap.area_between, 6) == 2325.0
    assert round(gap.area_delta_pct or 0, 9) == 20.0
    # no overlap -> no claim
    far = Frontier((), "f", Col.MEDIAN_INTVTY, Col.TPUT_PER_GPU, ("7",), (50.0,), (10.0,), (1,))
    assert frontier_gap(b, far) is None


def test_dep8_vs_tep8_on_minimax_m25(points: Callable[..., pl.DataFrame]) -> None:
    # The A/B on dp_attention: baseline false (TEP8), treatment true (DEP8), equal conc and ISL.
    d = compute_deltas(points("mm25"), axis=Col.DP_ATTENTION)
    r = d.table.filter((pl.col(Col.ISL) == 1024) & (pl.col(Col.CONC) == 4)).to_dicts()[0]
    # tput_per_gpu 238.148434 -> 214.878272: 100 x (214.878272 / 238.148434 - 1) = -9.77 %
    # median_intvty 73.407066 -> 63.255613: -13.83 %
    assert (r["baseline_value"], r["treatment_value"]) == ("False", "True")
    assert round(r["tput_per_gpu_delta_pct"], 2) == -9.77  # type: ignore[call-overload]
    assert round(r["median_intvty_delta_pct"], 2) == -13.83  # type: ignore[call-overload]
    assert r["confounds"] == []
    # pairs only where both arms measured: DEP8 ran ISL 1024 and 2048 only
    assert sorted(set(d.table.get_column(Col.ISL).to_list())) == [1024, 2048]


def _spec_rows() -> pl.DataFrame:
    common = {"tp": 8, "model_prefix": "m", "hw": "h200", "p90_ttft": 1.0}
    base_flags = {"--max-num-seqs": "8", "--gpu-memory-utilization": "0.9"}
    mtp_flags = {**base_flags, "--max-num-seqs": "16", "--speculative-config": '{"method": "mtp"}'}
    rows = []
    for conc, tb, tt in ((4, 400.0, 520.0), (8, 700.0, 840.0)):
        rows.append(row(**common, conc=conc, tput_per_gpu=tb, median_intvty=50.0 / conc, image="vllm:a",
                        server_flags=json.dumps(base_flags)))  # fmt: skip
        rows.append(row(**common, conc=conc, tput_per_gpu=tt, median_intvty=60.0 / conc, image="vllm:b",
                        spec_decoding="mtp", num_spec_tokens=3, al_measured=2.6, synthetic_acceptance=True,
                        synthetic_al=2.6, server_flags=json.dumps(mtp_flags)))  # fmt: skip
    rows.append(
        row(**common, conc=16, tput_per_gpu=900.0, median_intvty=3.0, image="vllm:a")
    )  # baseline only
    return frame(rows)


def test_mtp_vs_no_mtp_lists_confounds_but_not_the_ab_itself() -> None:
    d = compute_deltas(_spec_rows())
    got = d.table.select(
        Col.CONC, pl.col("tput_per_gpu_delta_pct").round(9), "al_measured_treatment"
    )
    assert got.rows() == [
        (4, 30.0, 2.6),  # 100 x (520 / 400 - 1)
        (8, 20.0, 2.6),  # 100 x (840 / 700 - 1)
    ]
    # --speculative-config and the synthetic pin are the A/B; image and --max-num-seqs are not
    assert d.table.get_column("confounds").to_list()[0] == [
        "image: vllm:a vs vllm:b",
        "--max-num-seqs: 8 vs 16",
    ]
    assert {
        "baseline_arm_id",
        "treatment_arm_id",
        "tput_per_gpu_baseline",
        "tput_per_gpu_treatment",
    } <= set(d.table.columns)


def test_pairing_across_two_runs(points: Callable[..., pl.DataFrame]) -> None:
    pts = points("dsr1").with_columns(
        pl.when(pl.col(Col.KV_OFFLOADING) == "dram")
        .then(pl.lit("dsr1-on"))
        .otherwise(pl.col(Col.RUN_ID))
        .alias(Col.RUN_ID)
    )
    assert pair_arms(pts, Col.KV_OFFLOADING) == ()  # within one run nothing pairs
    cross = pair_arms(pts, Col.KV_OFFLOADING, cross_run=True)
    assert [(p.baseline_run_id, p.treatment_run_id) for p in cross] == [("dsr1", "dsr1-on")] * 2


def test_the_axis_must_be_an_arm_identity_field() -> None:
    with pytest.raises(ValueError, match="not an arm-identity field"):
        compute_deltas(_spec_rows(), axis=Col.IMAGE)


def test_pairs_with_a_side_past_its_cliff_are_flagged_and_lead_with_confounds(
    points: Callable[..., pl.DataFrame],
) -> None:
    # DeepSeek-R1 B200, KV offload off (baseline) vs on: TP4 at users 1..8 is judged on both
    # sides (frontier or dominated); TP4 users 12 is past the off arm's knee; TP8 users 16 is
    # past both knees.
    d = compute_deltas(points("dsr1"), Col.KV_OFFLOADING)
    flags = {(r[Col.TP], r[Col.CONC]): r["flag"] for r in d.table.iter_rows(named=True)}
    assert [flags[(4, c)] for c in (1, 2, 4, 8)] == [None] * 4
    assert flags[(4, 12)] == "baseline post_cliff"
    assert flags[(8, 16)] == "baseline post_cliff; treatment post_cliff"
    assert d.table.columns[:7] == [
        "conc",
        "request_rate",
        "isl",
        "osl",
        "scenario",
        "flag",
        "confounds",
    ]
