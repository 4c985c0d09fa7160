"""Arms are server configurations (ingest.identity), on real sweeps."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analysis.comparison.confounds import confounds
from ingest.contract.col import Col
from ingest.contract.schema import DEFAULT_GROUP
from ingest.identity import splitting_flags
from ingest.pipeline import ingest_paths
from ingest.store import Store

ROOT = Path(__file__).resolve().parents[2]
TPU = ROOT / "tests" / "fixtures" / "wild" / "vllm_bench_sweep" / "tpu_v6e_qwen3_32b"
KIMI = ROOT / "data" / "samples" / "29003473063"


def test_sweep_variants_are_separate_arms_named_by_their_settings(tmp_path: Path) -> None:
    st = Store(tmp_path)
    ingest_paths([TPU], st, run_id="tpu")
    pts = st.points(["tpu"]).sort(Col.ARM_LABEL)
    # 2 x 2 serve variants (gpu-memory-utilization 0.9/0.95 x batched tokens and seqs) at one
    # request rate: four arms, each named by what sets it apart.
    assert pts.get_column(Col.ARM_ID).n_unique() == 4
    assert pts.get_column(Col.ARM_LABEL).to_list() == [
        "TP? EP1 | no spec | kv none | by request rate | gpu-memory-utilization=0.9, "
        "max-num-batched-tokens=2048, max-num-seqs=128",
        "TP? EP1 | no spec | kv none | by request rate | gpu-memory-utilization=0.9, "
        "max-num-batched-tokens=4096, max-num-seqs=256",
        "TP? EP1 | no spec | kv none | by request rate | gpu-memory-utilization=0.95, "
        "max-num-batched-tokens=2048, max-num-seqs=128",
        "TP? EP1 | no spec | kv none | by request rate | gpu-memory-utilization=0.95, "
        "max-num-batched-tokens=4096, max-num-seqs=256",
    ]
    assert pts.get_column(Col.REQUEST_RATE).to_list() == [16.0] * 4


def test_inferencex_max_num_seqs_equal_to_conc_and_ports_keep_one_arm(tmp_path: Path) -> None:
    st = Store(tmp_path)
    ingest_paths([KIMI], st, run_id="k")
    arms = dict(st.points(["k"]).group_by(Col.ARM_LABEL).agg(pl.col(Col.CONC).sort()).iter_rows())
    # vllm_command.txt has --max-num-seqs = conc and a different --port on every point.
    assert arms == {
        "TP4 EP1 | no spec | kv none": [1, 4, 8],
        "TP4 EP1 | no spec | kv dram/lmcache": [16, 32],
    }


def test_the_splitting_rule() -> None:
    loads: list[object] = [4, 8, 16]
    same = {"tensor-parallel-size": "4"}
    # a flag equal to the load is not a variant; one differing otherwise is
    assert splitting_flags([{**same, "max-num-seqs": str(c)} for c in (4, 8, 16)], loads) == []
    assert splitting_flags([{**same, "max-num-seqs": v} for v in ("4", "8", "8")], loads) == [
        "max-num-seqs"
    ]
    # set on some points and not others is a difference (--enable-prefix-caching)
    assert splitting_flags([same, {**same, "enable-prefix-caching": "true"}, same], loads) == [
        "enable-prefix-caching"
    ]


def test_confounds_never_list_run_noise() -> None:
    a = {Col.SERVER_FLAGS: '{"port": 8892, "host": "0.0.0.0", "max-num-batched-tokens": 2048}'}
    b = {Col.SERVER_FLAGS: '{"port": 8893, "host": "::", "max-num-batched-tokens": 4096}'}
    assert confounds(a, b) == ["--max-num-batched-tokens: 2048 vs 4096"]


def test_comparison_groups_hold_one_model() -> None:
    assert Col.MODEL in DEFAULT_GROUP and Col.MODEL_PREFIX in DEFAULT_GROUP


def test_two_models_never_dominate_each_other(tmp_path: Path) -> None:
    from analysis.frontier.prune import analyze_points

    # Real local runs of Kimi-K2.5 (two repos) and MiniMax-M2.5 at conc 32/64 with no model
    # prefix, hardware or GPU count recorded: one plane of total throughput vs interactivity.
    st = Store(tmp_path)
    ingest_paths(
        [ROOT / "tests" / "fixtures" / "inferencex" / "raw_bench_serving" / "local-results"],
        st,
        run_id="local",
    )
    pts = st.points(["local"])
    models = dict(zip(pts[Col.POINT_ID], pts[Col.MODEL], strict=True))
    assert len(set(models.values())) == 3
    table = analyze_points(pts, y=Col.TOTAL_TPUT, max_dominated_by=None).table
    pairs = [
        (models[r[Col.POINT_ID]], models[d])
        for r in table.iter_rows(named=True)
        for d in r["dominated_by"] or []
    ]
    assert pairs and all(a == b for a, b in pairs)


def test_spec_decoding_is_recognised_from_the_measurements_and_checked(tmp_path: Path) -> None:
    from analysis.acceptance import check_acceptance, load_golden_tables

    # A real vLLM 0.25.1 `bench serve` result of Qwen3.8-27B with spec_decode_* counters and no
    # label saying speculative decoding ran (it used to be stored as "no spec").
    spec = (
        ROOT
        / "tests"
        / "fixtures"
        / "wild"
        / "vllm_bench_serve"
        / "bench_serve_spec_decode_v0.25.1"
    )
    st = Store(tmp_path)
    ingest_paths([spec], st, run_id="spec")
    row = st.points(["spec"]).row(0, named=True)
    assert row[Col.SPEC_DECODING] == "detected"
    # K = 3780 draft tokens / 1260 drafts = 3; AL = 1 + 2723 accepted / 1260 drafts = 3.1611
    assert row[Col.NUM_SPEC_TOKENS] == 3
    assert row[Col.AL_MEASURED] == pytest.approx(1 + 2723 / 1260)
    assert "DETECTED K=3" in row[Col.ARM_LABEL]
    checks = check_acceptance(st.points(["spec"]), load_golden_tables(ROOT / "data" / "golden_al"))
    assert checks.height == 1
    # No golden table for Qwen3.8: a warning, not a skip; AL is within [1, K+1].
    assert checks.get_column("verdict").to_list() == ["warn"]
