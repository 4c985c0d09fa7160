"""Issue 23: more real public cases of one configuration arriving from two sources; each pairs
arm by arm (no "only in" arm), whatever else differs between the sources.

1. InferenceX Actions run 29003473063 (Kimi-K2.7 MXFP4 MI355X vLLM TP4, KV offload none vs
   LMCache): the raw aiperf exports of its `agentic_*` artifacts
   (tests/fixtures/aiperf/inferencex_kimik2.7_tp4_sweep_29003473063, read by the aiperf reader,
   identity from the directory names) beside its `process_agentic_result.py` aggregates
   (tests/fixtures/inferencex/agentic_agg/kimik2.7_tp4_sweep_29003473063, nested v1 rows).
2. The AMD ROCm team's InferenceX fork (tests/fixtures/wild/inferencex/
   rocm_team_kimik2.5_two_sources, PROVENANCE.md there): a browser download of a CI run's
   `results_bmk` artifact of 1 June (`results_bmk (1)/agg_bmk.json`, 20 flat rows) beside the
   per-point `bmk_agentic_*` files of a later run of the same sweep (3 June), Kimi-K2.5 MXFP4
   MI355X vLLM TP4, LMCache vs none, conc 1 to 64.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from analysis.comparison.compare import compare_runs
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
AIPERF = FIXTURES / "aiperf" / "inferencex_kimik2.7_tp4_sweep_29003473063"
AGG = FIXTURES / "inferencex" / "agentic_agg" / "kimik2.7_tp4_sweep_29003473063"
ROCM = FIXTURES / "wild" / "inferencex" / "rocm_team_kimik2.5_two_sources"


def _store(tmp: Path, runs: dict[str, Path]) -> Store:
    store = Store(tmp)
    for rid, path in runs.items():
        ingest_paths([path], store, run_id=rid)
    return store


def test_raw_aiperf_exports_pair_with_their_aggregates(tmp_path: Path) -> None:
    store = _store(tmp_path, {"raw": AIPERF, "agg": AGG})
    cmp = compare_runs(store.points(["raw", "agg"]), "agg", "raw")
    # the aiperf tree has results for conc 1 and 16 only (the other runs' exports are missing)
    assert sorted(cmp.points.select(Col.ARM_LABEL, Col.CONC).rows()) == [
        ("TP4 EP1 | no spec | kv dram/lmcache", 16),
        ("TP4 EP1 | no spec | kv none", 1),
    ]
    assert cmp.only_in_candidate.height == 0
    # the same measurement read two ways: interactivity equal to 5 digits
    per = {r[Col.CONC]: r for r in cmp.points.iter_rows(named=True)}
    assert round(per[1]["median_intvty_base"], 5) == round(per[1]["median_intvty_candidate"], 5)


def test_a_downloaded_ci_artifact_pairs_with_a_later_sweep(tmp_path: Path) -> None:
    store = _store(tmp_path, {"dl": ROCM / "download_0601", "sweep": ROCM / "sweep_0603"})
    pts = store.points(["dl", "sweep"])
    assert pts.height == 40
    key = pts.select(Col.MODEL_PREFIX, Col.HW, Col.FRAMEWORK, Col.PRECISION, Col.TP).unique()
    assert key.rows() == [("kimik2.5", "mi355x", "vllm", "fp4", 4)]
    cmp = compare_runs(pts, "dl", "sweep")
    assert cmp.only_in_base.height == 0 and cmp.only_in_candidate.height == 0
    got = cmp.points.group_by(Col.ARM_LABEL).agg(pl.col(Col.CONC).sort()).sort(Col.ARM_LABEL)
    concs = [1, 2, 4, 8, 16, 32, 40, 48, 56, 64]
    assert got.rows() == [
        ("TP4 EP1 | no spec | kv dram/lmcache", concs),
        ("TP4 EP1 | no spec | kv none", concs),
    ]
