"""Every InferenceX aggregate shape, read from real files, checked against hand-computed values.

Shapes (docs/formats.d/inferencex.md): process_result.py rows (alone and in a `{"benchmarks": [...]}`
container), AgentX v3 nested rows, flat kv-cache-tester rows, `agg_bmk.json` arrays mixing them,
and the flat process_agentic_result.py v0.x rows (no real copy found: built from the generator's
key set, see PROVENANCE.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ingest.errors import ParseError
from ingest.normalize.row import normalize
from ingest.readers.agentic import AgenticV3Reader
from ingest.readers.agentic_flat import AgenticFlatReader, is_agentic_flat
from ingest.readers.agg_array import AggArrayReader
from ingest.readers.base import Row, SourceFile

FIX = Path(__file__).resolve().parents[2] / "fixtures"
WILD = FIX / "wild" / "inferencex"
V3 = (
    FIX
    / "inferencex/agentic_agg/kimik2.7_tp4_sweep_29003473063"
    / "kimik2.7_tp4_conc1_kvnone_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc1_mi355x-amds_01.json"
)
FLAT = (
    FIX
    / "inferencex/agentic_agg/dsr1_b200_multiturn_pareto_input"
    / "agg_dsr1_tp8_users16_offloadoff_fp4_vllm_tp8-ep8-dpafalse_disagg-false_spec-none_conc16_b200-dgxc-slurm_2.json"
)
FIXED = (
    FIX
    / "inferencex/agg_fixed_seq"
    / "agg_kimik2.5_8k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc32_MI355-gbt350-odcdh5-wbb3.json"
)


def _src(path: Path, rel: str | None = None) -> tuple[SourceFile, Any]:
    data = path.read_bytes()
    return SourceFile(path, rel or path.name, "a", data), json.loads(data)


def _full(src: SourceFile, row: Row) -> Row:
    return normalize(
        row, run_id="r", source_path=src.rel, source_sha256="", artifact="", ingested_at=None
    )


def _facts(row: Row) -> tuple[Any, ...]:
    return (row["conc"], row["tput_per_gpu"], row["median_intvty"], row["p99_ttft"])


def test_manual_sweep_container_of_process_result_rows() -> None:
    src, doc = _src(WILD / "manual_sweep_container" / "tpu-manual-sweep.json")
    res = AggArrayReader().read(src, doc)
    # Six benchmark rows, all distinct configurations; the evaluations block is not points.
    assert len(res.points) == 6 and res.rejects == []
    first = _full(src, res.points[0])
    # Row 0: conc 16; tput_per_gpu as written; median_intvty = 1000 / median_tpot_ms
    # = 1 / 0.015749082109593533 s = 63.4958 tok/s/user; p99_ttft already in seconds: 3.72297 s.
    assert _facts(first) == (16, 2180.1187026656025, pytest.approx(63.49576394), 3.72296718139667)
    assert pytest.approx(first["median_intvty"]) == 1 / 0.015749082109593533
    assert first["schema_variant"] == "agg_fixed_v1"


def test_agentic_v3_nested_row() -> None:
    src, doc = _src(V3)
    row = _full(src, AgenticV3Reader().read(src, doc).points[0])
    # conc 1 (top-level `conc`); tput_per_gpu = throughput.total 5400.83902 tok/s / tp 4
    # = 1350.2098 (stored rounded to 1350.20976); median_intvty = latency.intvty.p50 = 76.706
    # (1 / p50 itl 0.01304 s = 76.69, computed by the aggregator before rounding);
    # v3 keeps mean/p50/p75/p90/p95/std only, so there is no p99_ttft.
    assert _facts(row) == (1, 1350.20976, 76.706, None)
    assert pytest.approx(row["tput_per_gpu"], abs=1e-5) == 5400.83902 / 4


def test_flat_kv_cache_tester_row() -> None:
    src, doc = _src(FLAT)
    row = _full(src, AgenticFlatReader().read(src, doc).points[0])
    # conc = users 16; tput_per_gpu = total_tput_tps 1709.9076 / 8 GPUs = 213.7385;
    # no *_intvty keys, so median_intvty = 1 / median_itl = 1 / 0.0383046 s = 26.1065;
    # p99_ttft = 1200.465 s (seconds already: the run was past its cliff).
    assert _facts(row) == (16, 213.73845037479754, pytest.approx(26.10651), 1200.4650045013427)
    assert pytest.approx(row["tput_per_gpu"]) == 1709.9076029983803 / 8
    assert row["kv_offloading"] == "none"


def test_agg_bmk_array_mixing_real_rows_of_every_shape() -> None:
    # collect_results.py concatenates every *.json of the bmk_* artifacts into one array.
    rows = [json.loads(p.read_text()) for p in (FIXED, V3, FLAT)]
    src = SourceFile(Path("agg_bmk.json"), "results_bmk/agg_bmk.json", "results_bmk", b"")
    res = AggArrayReader().read(src, rows)
    assert res.rejects == []
    got = [_facts(_full(src, r)) for r in res.points]
    # Fixed row: conc 32, tput_per_gpu 157.12..., median_intvty = 1000 / median_tpot_ms.
    fixed = rows[0]
    assert got[0] == (32, fixed["tput_per_gpu"], fixed["median_intvty"], fixed["p99_ttft"])
    assert fixed["median_intvty"] == pytest.approx(1 / fixed["median_tpot"])
    assert got[1] == (1, 1350.20976, 76.706, None)
    assert got[2][:2] == (16, 213.73845037479754)


def _v0_row(**over: Any) -> dict[str, Any]:
    # The key set of utils/process_agentic_result.py at 1b234994f (v0.3): conc, offloading,
    # {mean,p75,p90,p95,std}_{qps,ttft,e2el,itl,tpot,intvty}, throughput and per-GPU throughput.
    row: dict[str, Any] = {
        "hw": "mi355x",
        "conc": 8,
        "image": "vllm/vllm-openai-rocm:v0.21.0",
        "model": "moonshotai/Kimi-K2.5",
        "infmax_model_prefix": "kimik2.5",
        "framework": "vllm",
        "precision": "fp4",
        "spec_decoding": "none",
        "disagg": False,
        "scenario_type": "agentic-coding",
        "is_multinode": False,
        "tp": 4,
        "ep": 1,
        "dp_attention": "false",
        "offloading": "cpu",
        "num_requests_total": 120,
        "num_requests_successful": 120,
        "mean_ttft": 1.5,
        "p75_ttft": 2.0,
        "p90_ttft": 3.0,
        "p95_ttft": 4.0,
        "mean_itl": 0.02,
        "p75_itl": 0.025,
        "mean_intvty": 55.0,
        "p75_intvty": 60.0,
        "total_tput_tps": 4000.0,
        "tput_per_gpu": 1000.0,
    }
    row.update(over)
    return row


def test_flat_process_agentic_result_v0_row() -> None:
    doc = _v0_row()
    src = SourceFile(Path("x.json"), "bmk_agentic_x/x.json", "bmk_agentic_x", b"")
    assert is_agentic_flat(doc)
    row = _full(src, AgenticFlatReader().read(src, doc).points[0])
    # conc 8; tput_per_gpu = 4000 / 4 GPUs = 1000; v0.2+ has no median and no p99.
    assert (row["conc"], row["tput_per_gpu"], row["p99_ttft"]) == (8, 1000.0, None)
    assert (row["p75_ttft"], row["p95_ttft"], row["p75_intvty"]) == (2.0, 4.0, 60.0)
    assert row["kv_offloading"] == "cpu"
    assert row["intvty_definition"] == "percentile_of_inverse"


def test_a_missing_required_key_names_the_key_the_reader_and_the_keys_found() -> None:
    doc = _v0_row()
    del doc["conc"]
    src = SourceFile(Path("x.json"), "bmk_agentic_x/x.json", "bmk_agentic_x", b"")
    with pytest.raises(ParseError) as err:
        AgenticFlatReader().read(src, doc)
    assert err.value.field == "conc"
    reason = err.value.reason
    assert reason.startswith("agentic_flat: required field 'conc' is missing")
    assert (
        "accepted keys: conc, users" in reason and "keys found: disagg, dp_attention, ep" in reason
    )
    assert "FIELD_ALIASES['conc']" in reason
