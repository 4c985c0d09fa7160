"""Run vs run: per-arm frontier uplift, per-conc deltas, unmatched arms, the PR markdown."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

from analysis.comparison.compare import RunComparison, compare_runs, comparison_markdown
from ingest.contract.col import Col

DRAM4 = "TP4 EP4 | no spec | kv dram"


@pytest.fixture(scope="module")
def cmp(points: Callable[..., pl.DataFrame]) -> RunComparison:
    # Candidate "pr": the real DeepSeek-R1 sweep with offload-on throughput 10% higher and the
    # TP8 offload-on arm not run. Arm ids ignore the run, so the arms match by configuration.
    base = points("dsr1")
    pr = base.filter(~((pl.col(Col.TP) == 8) & (pl.col(Col.KV_OFFLOADING) == "dram"))).with_columns(
        pl.lit("pr").alias(Col.RUN_ID), ("pr-" + pl.col(Col.POINT_ID)).alias(Col.POINT_ID),
        pl.when(pl.col(Col.KV_OFFLOADING) == "dram").then(pl.col(Col.TPUT_PER_GPU) * 1.1)
        .otherwise(pl.col(Col.TPUT_PER_GPU)).alias(Col.TPUT_PER_GPU),
    )  # fmt: skip
    return compare_runs(pl.concat([base, pr]), "dsr1", "pr")


def test_frontier_uplift_per_matched_arm(cmp: RunComparison) -> None:
    # PCHIP is linear in y, so a frontier scaled by 1.1 is 1.1 x the interpolant everywhere: +10 %.
    # Scaling throughput within an arm keeps its cliff verdicts (the rules are ratios) and its
    # frontier points, so the x range is the arm's own: TP4 on c16..c1, 32.25..109.42.
    got = {r["arm_label"]: r for r in cmp.arms.to_dicts()}
    assert sorted(got) == [DRAM4, "TP4 EP4 | no spec | kv none", "TP8 EP8 | no spec | kv none"]
    r = got[DRAM4]
    assert (round(r["x_lo"], 2), round(r["x_hi"], 2), round(r["uplift_pct"], 9)) == (
        32.25,
        109.42,
        10.0,
    )
    assert r["matched_concs"] == 12
    assert round(got["TP4 EP4 | no spec | kv none"]["uplift_pct"], 9) == 0.0
    # area between the frontiers = 0.1 x the area under the base frontier on that range
    assert round(r["area_between"] / r["area_base"], 9) == 0.1


def test_per_conc_deltas_and_unmatched_arms(cmp: RunComparison) -> None:
    on8 = cmp.points.filter((pl.col(Col.ARM_LABEL) == DRAM4) & (pl.col(Col.CONC) == 8)).to_dicts()[
        0
    ]
    # 2119.510118 -> 1.1 x = 2331.461130 (+10.0 %); interactivity unchanged (0.0 %)
    assert round(on8["tput_per_gpu_candidate"], 2) == 2331.46
    assert round(on8["tput_per_gpu_delta_pct"], 9) == 10.0 and on8["median_intvty_delta_pct"] == 0.0
    assert cmp.only_in_base.select(Col.ARM_LABEL, "concs").rows() == [
        ("TP8 EP8 | no spec | kv dram", [1, 2, 4, 12, 16, 32, 128, 256, 512])
    ]
    assert cmp.only_in_candidate.height == 0


def test_group_envelope_comparison(cmp: RunComparison) -> None:
    # base envelope spans 32.25 (TP4 on c16) .. 123.26 (TP8 on c1); without TP8 on the candidate
    # envelope ends at TP8 off c1, 121.98: the common range is [32.25, 121.98]
    (g,) = cmp.groups.to_dicts()
    assert (round(g["x_lo"], 2), round(g["x_hi"], 2)) == (32.25, 121.98)
    assert g["uplift_pct"] > 0


def test_markdown_for_a_pr_comment(cmp: RunComparison) -> None:
    md = comparison_markdown(cmp)
    assert md.startswith("### paretolens compare: `dsr1` → `pr`\n")
    assert "| TP4 EP4 \\| no spec \\| kv dram | 32.25–109.42 | +10.0% | +10.0% |" in md
    assert "| TP4 EP4 \\| no spec \\| kv dram | c8 | 2119.51 → 2331.46 (+10.0%) | " in md
    # the group envelope (the best of every arm) moves 10% too
    assert "Envelope uplift per comparison group" in md and "| +10.0% | +10.0% |" in md
    assert md.endswith(
        "**Only in base:**\n- TP8 EP8 | no spec | kv dram (conc 1, 2, 4, 12, 16, 32, 128, 256, 512)\n"
    )


def test_markdown_without_a_common_arm_says_so(points: Callable[..., pl.DataFrame]) -> None:
    # The real Kimi-K2.7 TP4 sweep as base, its TP8 sweep as candidate: no arm in common, so
    # the markdown says so in sentences instead of printing empty tables.
    kimi = points("kimi")
    base = kimi.filter(pl.col(Col.TP) == 4)
    cand = kimi.filter(pl.col(Col.TP) == 8).with_columns(pl.lit("tp8").alias(Col.RUN_ID))
    cmp = compare_runs(pl.concat([base, cand]), "kimi", "tp8")
    assert cmp.arms.height == 0 and cmp.points.height == 0
    md = comparison_markdown(cmp)
    assert "No arm is in both runs, so there is no frontier to compare.\n" in md
    assert "No arm was measured at the same load in both runs.\n" in md
    # The group envelope still compares: the TP8 sweep's best is 39.9% below TP4's over the
    # interactivity both reach (29.08-47.63 tok/s/user); it is the only table.
    assert "| 29.08–47.63 | -39.9% | -41.6% |" in md
    assert md.count("|---|---|---|---|\n") == 1 and md.count("\n|---") == 1
    assert md.count("- TP4 EP1") == 2 and md.count("- TP8 EP1") == 2


def test_confounds_per_load_name_what_else_differs(points: Callable[..., pl.DataFrame]) -> None:
    # The real DeepSeek-R1 sweep against itself with a few things changed: the image of one arm,
    # the runner of one point, and server flags on two points (one only by a noise flag).
    base = points("dsr1")
    tp8 = (pl.col(Col.ARM_LABEL) == "TP8 EP8 | no spec | kv none") & pl.col(Col.CONC).is_in([1, 2])
    pr = base.with_columns(
        pl.lit("pr").alias(Col.RUN_ID), ("pr-" + pl.col(Col.POINT_ID)).alias(Col.POINT_ID),
        pl.when(pl.col(Col.ARM_LABEL) == "TP4 EP4 | no spec | kv none").then(pl.lit("vllm:v0.20"))
        .otherwise(pl.col(Col.IMAGE)).alias(Col.IMAGE),
        pl.when((pl.col(Col.ARM_LABEL) == DRAM4) & (pl.col(Col.CONC) == 4)).then(pl.lit("nb_9"))
        .otherwise(pl.col(Col.RUNNER)).alias(Col.RUNNER),
        pl.when(tp8 & (pl.col(Col.CONC) == 1)).then(pl.lit('{"port": 9000}'))
        .when(tp8).then(pl.lit('{"port": 9000, "max-num-seqs": 64}'))
        .otherwise(pl.col(Col.SERVER_FLAGS)).alias(Col.SERVER_FLAGS),
    )  # fmt: skip
    got = compare_runs(pl.concat([base, pr]), "dsr1", "pr").points
    found = {
        (r[Col.ARM_LABEL], r[Col.CONC]): r["confounds"]
        for r in got.iter_rows(named=True)
        if r["confounds"]
    }
    runner = base.filter((pl.col(Col.ARM_LABEL) == DRAM4) & (pl.col(Col.CONC) == 4))
    old_runner = runner.get_column(Col.RUNNER).item()
    tp4 = base.filter(pl.col(Col.ARM_LABEL) == "TP4 EP4 | no spec | kv none")
    assert found == {
        **{
            ("TP4 EP4 | no spec | kv none", c): ["image: vllm/vllm-openai:v0.19.1 vs vllm:v0.20"]
            for c in tp4.get_column(Col.CONC).to_list()
        },
        (DRAM4, 4): [f"runner: {old_runner} vs nb_9"],
        ("TP8 EP8 | no spec | kv none", 2): ["--max-num-seqs: absent vs 64"],
    }
    assert got.height == base.height
