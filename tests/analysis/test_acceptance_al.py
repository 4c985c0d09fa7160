"""Acceptance-length checks: golden tables, pinned vs measured, sanity checks, not_measured."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

from analysis.acceptance import (
    AcceptanceParams,
    check_acceptance,
    draft_variant,
    find_golden,
    load_golden_tables,
    parse_golden_table,
)
from tests.analysis.pointdata import GOLDEN, frame, row

TABLES = load_golden_tables(GOLDEN)


def _check(params: AcceptanceParams = AcceptanceParams(), **fields: Any) -> dict[str, Any]:
    base = {"conc": 32, "tp": 8, "tput_per_gpu": 500.0, "spec_decoding": "mtp", "framework": "vllm"}
    (out,) = check_acceptance(frame([row(**{**base, **fields})]), TABLES, params).to_dicts()
    return out


def test_the_nine_golden_tables_and_their_k3_values() -> None:
    # formats.md 4.1, K=3 column (thinking on / off)
    k3 = {
        (t.source, t.family, t.variant): (t.lookup("thinking_on", 3), t.lookup("thinking_off", 3))
        for t in TABLES
    }
    assert k3 == {
        ("dsv4-pro-0813-dspark.yaml", "deepseek-v4-pro-0813", "dspark"): (3.01, None),
        ("dsv4_mtp.yaml", "deepseek-v4-pro", "mtp"): (2.49, 2.97),
        ("glm5.2_mtp.yaml", "glm-5.2-fp8", "mtp"): (2.99, None),
        ("kimik2.5_eagle3.yaml", "kimi-k2.5-nvfp4", "eagle3"): (2.88, 2.75),
        ("kimik3_dspark.yaml", "kimi-k3", "dspark"): (2.87, None),
        ("kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method.yaml", "kimi-k3",
         "dspark_probabilistic_sample_method_block_rejection_sample_method"): (3.00, None),
        ("minimaxm3_eagle3.yaml", "minimax-m3", "eagle3"): (2.83, 2.93),
        ("minimaxm3_eagle3_gqa.yaml", "minimax-m3", "eagle3_gqa"): (2.78, 2.97),
        ("qwen3.5_mtp.yaml", "qwen3.5-397b-a17b-nvfp4", "mtp"): (3.39, 3.33),
    }  # fmt: skip


def test_the_draft_model_picks_the_table() -> None:
    # formats.md 3.9: MiniMax-M3 H200 runs Inferact/MiniMax-M3-EAGLE3-GQA -> the GQA file
    v = draft_variant("eagle3", "Inferact/MiniMax-M3-EAGLE3-GQA", "mtp")
    t = find_golden(TABLES, "MiniMaxAI/MiniMax-M3-MXFP8", "minimaxm3", v)
    assert (v, t.source if t else None, t.lookup("thinking_on", 3) if t else None) == (
        "eagle3_gqa",
        "minimaxm3_eagle3_gqa.yaml",
        2.78,
    )
    # InferenceX's prefix map: dsv4 -> deepseek-v4-pro (the checkpoint name would also match)
    t = find_golden(TABLES, None, "dsv4", draft_variant(None, None, "mtp"))
    assert t is not None and t.source == "dsv4_mtp.yaml"


def test_legacy_list_form_and_na_cells() -> None:
    (t,) = parse_golden_table("m:\n  thinking_on: [{1: 1.90}, {2: 2.60}, {3: N/A}]\n", "m_mtp.yaml")
    assert (t.family, t.variant, t.values) == (
        "m",
        "mtp",
        (("thinking_on", 1, 1.9), ("thinking_on", 2, 2.6), ("thinking_on", 3, None)),
    )
    with pytest.raises(ValueError, match=r"bad.yaml: m.thinking_on.1: expected an AL number"):
        parse_golden_table("m:\n  thinking_on: {1: fast}\n", "bad.yaml")


# MiniMax-M2.5 EAGLE3 K=3 LiveCodeBench capture (tests/fixtures/vllm/...): the bench console at
# conc 32 reports 21936 drafts and 29250 accepted tokens -> AL = 1 + 29250/21936 = 2.3334; the
# run's fixed acceptance rates 0.664606, 0.419918, 0.259226 pin AL = 1 + 1.34375 = 2.34375.
CAPTURE = {"model": "MiniMaxAI/MiniMax-M2.5", "spec_method": "eagle3", "draft_model": "thoughtworks/MiniMax-M2.5-Eagle3",
           "num_spec_tokens": 3, "spec_drafts": 21936.0, "spec_accepted_tokens": 29250.0,
           "accept_rate_per_pos": [0.6601, 0.4153, 0.2581], "al_source": "bench_console"}  # fmt: skip


def test_a_pinned_and_matching_run_is_ok() -> None:
    out = _check(**CAPTURE, synthetic_acceptance=True, synthetic_al=2.34375)
    # |2.3334 - 2.3438| = 0.0103 <= 0.05
    assert (out["verdict"], out["al_expected_source"], out["al_expected"]) == (
        "ok",
        "pinned",
        2.34375,
    )
    assert round(out["al_measured"], 4) == 2.3334
    assert out["reason"] == "measured 2.33 vs pinned 2.34 (delta -0.01, tolerance 0.05)"


def test_a_pin_that_was_not_applied_fails() -> None:
    # MiniMax-M3 EAGLE3-GQA K=3 thinking on pins the golden 2.78 (formats.md 3.9). If the server
    # ran real acceptance instead, the counters say 1 + 29250/21936 = 2.33: off by 0.45 > 3 x 0.05.
    out = _check(**{**CAPTURE, "model": "MiniMaxAI/MiniMax-M3-MXFP8", "model_prefix": "minimaxm3",
                    "draft_model": "Inferact/MiniMax-M3-EAGLE3-GQA"},
                 thinking_mode="thinking_on", synthetic_acceptance=True, synthetic_al=2.78)  # fmt: skip
    assert (out["verdict"], out["al_golden"], out["golden_table"]) == (
        "fail",
        2.78,
        "minimaxm3_eagle3_gqa.yaml",
    )
    assert out["reason"] == (
        "measured 2.33 vs pinned 2.78 (delta -0.45, tolerance 0.05): the pin was not applied; "
        "golden 2.78 (minimaxm3_eagle3_gqa.yaml minimax-m3.thinking_on.3)"
    )


def test_a_run_without_counters_is_not_measured(points: Callable[..., pl.DataFrame]) -> None:
    # The Kimi-K2.5 MTP fixed-seq aggregates carry no spec-decode counters (formats.md 0.2).
    out = check_acceptance(points("k25mtp"), TABLES)
    assert out.select("conc", "verdict", "reason").rows() == [
        (c, "not_measured", "no acceptance counters (al_measured missing)") for c in (4, 32, 64)
    ]


def test_the_real_capture_has_no_reference(points: Callable[..., pl.DataFrame]) -> None:
    # Its server log shows rejection_sample_method 'standard' (real acceptance), and there is no
    # golden table for MiniMax-M2.5, so the check can only say so.
    out = check_acceptance(points("lcb"), TABLES)
    assert out.select("conc", "verdict").rows() == [(32, "warn"), (64, "warn")]
    assert (
        out.get_column("reason")[0]
        == "no pinned AL and no golden table for eagle3 K=3 (thinking_on)"
    )


def test_a_pin_off_the_golden_value_warns() -> None:
    # the H100 sibling once pinned 2.83 (the non-GQA table) with the GQA draft
    out = _check(**{**CAPTURE, "model": "MiniMaxAI/MiniMax-M3-MXFP8", "draft_model": "Inferact/MiniMax-M3-EAGLE3-GQA",
                    "spec_accepted_tokens": 1.83 * 21936}, synthetic_acceptance=True, synthetic_al=2.83)  # fmt: skip
    assert out["verdict"] == "warn"
    assert out["reason"].endswith("pinned 2.83 != golden 2.78")


def test_real_acceptance_against_golden_is_informational() -> None:
    # Qwen3.5 MTP K=3 thinking off: golden 3.33. Measured 1 + 2.35 = 3.35 is within 0.05: ok.
    qwen = {"model": "nvidia/Qwen3.5-397B-A17B-NVFP4", "num_spec_tokens": 3, "thinking_mode": "thinking_off",
            "spec_drafts": 1000.0}  # fmt: skip
    assert _check(**qwen, spec_accepted_tokens=2350.0)["verdict"] == "ok"
    out = _check(**qwen, spec_accepted_tokens=1900.0)  # 2.90: real acceptance, no pin
    assert (out["verdict"], out["al_expected_source"]) == ("warn", "golden")
    assert "real acceptance (no pin), informational" in out["reason"]


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"al_measured": 4.5}, "AL 4.50 outside [1, K+1 = 4]"),
        ({"al_measured": 2.0, "draft_acceptance_rate": 1.2}, "acceptance rate 1.200 outside [0, 1]"),
        ({"al_measured": 2.0, "accept_rate_per_pos": [0.5, 0.6, 0.2]}, "per-position rate rises at position 1 (0.500 -> 0.600)"),
        ({"al_measured": 2.0, "spec_drafts": 0.0}, "drafts = 0 (need > 0)"),
    ],
)  # fmt: skip
def test_sanity_checks_fail(fields: dict[str, Any], reason: str) -> None:
    out = _check(num_spec_tokens=3, synthetic_acceptance=True, synthetic_al=2.0, **fields)
    assert (out["verdict"], out["reason"]) == ("fail", reason)


def test_trt_pins_are_al_minus_one_when_configured() -> None:
    # TRT-LLM's TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78 means AL 2.78
    trt = {**CAPTURE, "framework": "trt", "model": "MiniMaxAI/MiniMax-M3-MXFP8",
           "draft_model": "Inferact/MiniMax-M3-EAGLE3-GQA", "spec_accepted_tokens": 1.78 * 21936,
           "synthetic_acceptance": True, "synthetic_al": 1.78}  # fmt: skip
    out = _check(AcceptanceParams(trt_pin_convention="al_minus_one"), **trt)
    assert (out["verdict"], round(out["al_expected"], 6)) == ("ok", 2.78)
    out = _check(**trt)
    assert out["verdict"] == "fail" and "TRT's setting is AL-1" in out["reason"]


def test_the_tolerance_respects_the_golden_rounding() -> None:
    with pytest.raises(ValueError, match="rounded to 2 dp"):
        AcceptanceParams(tolerance=0.005)
