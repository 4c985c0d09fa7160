"""Accuracy joined to arms, and the combined-standard-error flag in A/B deltas and compare, on
the real InferenceX eval aggregate (tests/fixtures/wild/evals/inferencex_agg/supplemental-evals.json:
DeepSeek-R1 on B200 with TRT-LLM, gsm8k, 1319 samples)."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from analysis.comparison.compare import compare_runs
from analysis.comparison.deltas import compute_deltas
from analysis.evals import accuracy_flag, arm_accuracy, evals_for, joins
from ingest.contract.col import Col
from ingest.eval_store import read_evals
from ingest.pipeline import ingest_paths
from ingest.store import Store
from tests.analysis.pointdata import frame, row

AGG = Path(__file__).resolve().parents[1] / "fixtures/wild/evals/inferencex_agg"
FP8 = "deepseek-ai/DeepSeek-R1-0528"
FP4 = "nvidia/DeepSeek-R1-0528-FP4-V2"


def _points(run: str, arms: list[tuple[str, str, int, str]]) -> pl.DataFrame:
    """TRT-LLM DeepSeek-R1 arms on B200 with DP attention: (model, precision, tp=ep, spec)."""
    rows = []
    for model, prec, tp, spec in arms:
        for conc, tput in ((64, 900.0), (128, 1500.0), (256, 2000.0)):
            rows.append(
                row(run_id=run, source=f"{prec}_tp{tp}_{spec}_c{conc}.json", model=model,
                    model_prefix="dsr1", hw="b200", framework="trt", precision=prec, tp=tp,
                    ep=tp, dp_attention=True, spec_decoding=spec, conc=conc,
                    tput_per_gpu=tput * (1.2 if spec == "mtp" else 1.0),
                    median_intvty=3000.0 / conc, p90_ttft=1.0)
            )  # fmt: skip
    return frame(rows)


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    store = Store(tmp_path_factory.mktemp("evals"))
    ingest_paths([AGG / "supplemental-evals.json"], store, run_id="trt")
    return read_evals(store, ["trt"])


def test_the_flag_arithmetic() -> None:
    # FP8 TP8 EP8 DPA conc 256 (rows 40 and 38): no spec 0.904473 +- 0.008097, MTP 0.937074 +-
    # 0.006689. diff = 0.937074 - 0.904473 = +0.032600; combined = sqrt(0.008097^2 + 0.006689^2)
    # = sqrt(6.5555e-5 + 4.4740e-5) = 0.010502 < 0.032600: flagged
    diff, se, flagged = accuracy_flag(
        0.9044730856709629, 0.008096605771155703, 0.9370735405610311, 0.006688762581532758
    )
    assert (round(diff or 0, 6), round(se or 0, 6), flagged) == (0.0326, 0.010502, True)
    # FP4 TP8 EP8 DPA conc 256 (rows 36 and 32): 0.940864 +- 0.006497 vs 0.937074 +- 0.006689:
    # diff -0.003791, combined sqrt(4.2215e-5 + 4.4740e-5) = 0.009325 > 0.003791: not flagged
    diff, se, flagged = accuracy_flag(
        0.9408642911296436, 0.006497266660428876, 0.9370735405610311, 0.0066887625815327525
    )
    assert (round(diff or 0, 6), round(se or 0, 6), flagged) == (-0.003791, 0.009325, False)
    # a missing stderr says nothing (the InferenceX app fixture's row has none)
    assert accuracy_flag(0.5, None, 0.6, 0.01) == (pytest.approx(0.1), None, None)


def test_evals_join_arms_by_configuration(evals: pl.DataFrame) -> None:
    pts = _points("trt", [(FP8, "fp8", 8, "none"), (FP8, "fp8", 8, "mtp")])
    joined = evals_for(pts, evals)
    # of 66 rows only the two TRT FP8 TP8 EP8 DPA conc-256 rows match; TP8 EP8 without DPA
    # (row 10, conc 64) and TP8 EP1 (rows 39, 41) do not; each gives em_strict and em_flexible
    assert joined.height == 4
    by_arm = {
        (r[Col.ARM_LABEL], r["metric"]): (r["value"], r["stderr"], r["n_eff"], r["conc"])
        for r in joined.iter_rows(named=True)
    }
    labels = sorted({lbl for lbl, _ in by_arm})
    assert labels == ["TP8 EP8 DPA | MTP | kv none", "TP8 EP8 DPA | no spec | kv none"]
    assert by_arm[("TP8 EP8 DPA | no spec | kv none", "em_strict")] == (
        0.9044730856709629, 0.008096605771155703, 1319, 256,
    )  # fmt: skip
    # conc 256 was measured: the eval names that point
    point = pts.filter((pl.col(Col.SPEC_DECODING) == "mtp") & (pl.col(Col.CONC) == 256)).get_column(
        Col.POINT_ID
    )[0]
    assert point in joined.get_column(Col.POINT_ID).to_list()
    acc = arm_accuracy(pts, evals)
    assert acc.select(Col.ARM_LABEL, "task", "metric", "value", "n_evals").rows() == [
        ("TP8 EP8 DPA | MTP | kv none", "gsm8k", "em_strict", 0.9370735405610311, 1),
        ("TP8 EP8 DPA | no spec | kv none", "gsm8k", "em_strict", 0.9044730856709629, 1),
    ]


def test_the_join_rule() -> None:
    arm = {"hw": "b200", "precision": "fp8", "model": FP8, "model_prefix": "dsr1", "tp": 8}
    ev = {"hw": "b200", "precision": "fp8", "model_prefix": "dsr1", "tp": 8, "ep": 8}
    assert joins(ev, arm)  # ep unknown on the arm: not a mismatch
    assert not joins({**ev, "tp": 4}, arm)
    assert not joins({**ev, "hw": None}, arm)  # hardware must be stated
    assert not joins({"hw": "b200", "precision": "fp8", "tp": 8}, arm)  # and a model
    assert joins({"hw": "b200", "precision": "fp8", "model": "/models/DeepSeek-R1-0528"}, arm)


def test_ab_deltas_carry_accuracy_and_flag(evals: pl.DataFrame) -> None:
    pts = _points(
        "trt",
        [(FP8, "fp8", 8, "none"), (FP8, "fp8", 8, "mtp"), (FP4, "fp4", 8, "none"),
         (FP4, "fp4", 8, "mtp")],
    )  # fmt: skip
    d = compute_deltas(pts, Col.SPEC_DECODING, evals=evals)
    assert d.frontier.height == 2
    rows = {
        (r["accuracy_baseline"], r["accuracy_treatment"]): r["accuracy_flag"]
        for r in d.frontier.iter_rows(named=True)
    }
    # FP8: 0.904473 -> 0.937074, +0.0326 > combined 0.0105: flagged
    assert rows[(0.9044730856709629, 0.9370735405610311)] == (
        "gsm8k em_strict 0.9045 -> 0.9371 (+0.0326) differs by more than the combined stderr 0.0105"
    )
    # FP4 TP8 EP8: two evals per arm at conc 256, January's (rows 9 and 5, dated) and
    # February's (rows 36 and 32, no timestamp); the newest dated one counts: 0.952995 on both
    # sides, diff 0: no flag
    assert rows[(0.9529946929492039, 0.9529946929492039)] is None
    # every per-conc row of a pair carries the pair's accuracy
    table = d.table.filter(pl.col("accuracy_flag").is_not_null())
    assert sorted(table.get_column(Col.CONC).to_list()) == [64, 128, 256]


def test_compare_flags_an_accuracy_change_between_runs(evals: pl.DataFrame) -> None:
    arms = [(FP4, "fp4", 4, "none")]
    pts = pl.concat([_points("jan", arms), _points("feb", arms)])
    # January's row 7 (0.955269 +- 0.005694) in run "jan", February's row 34 (0.936315 +-
    # 0.006726) in run "feb": diff -0.018954, combined sqrt(3.2420e-5 + 4.5242e-5) = 0.008813
    runs = {"supplemental-evals.json#7": "jan", "supplemental-evals.json#34": "feb"}
    ev = evals.filter(pl.col("source_path").is_in(list(runs))).with_columns(
        pl.col("source_path").replace_strict(runs).alias(Col.RUN_ID)
    )
    assert round(math.sqrt(0.005693886131407046**2 + 0.006726213078805727**2), 6) == 0.008813
    cmp = compare_runs(pts, "jan", "feb", evals=ev)
    (arm,) = cmp.arms.iter_rows(named=True)
    assert (arm["accuracy_baseline"], arm["accuracy_treatment"]) == (
        0.9552691432903715, 0.9363153904473086,
    )  # fmt: skip
    assert arm["accuracy_flag"] == (
        "gsm8k em_strict 0.9553 -> 0.9363 (-0.0190) differs by more than the combined stderr 0.0088"
    )
    assert cmp.points.get_column("accuracy_flag").drop_nulls().len() == 3  # c64, c128, c256
