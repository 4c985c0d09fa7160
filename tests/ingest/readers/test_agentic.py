"""AgentX aggregates: the nested v3 shape (single-node, multinode `_concN`) and the older flat one."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers.agentic import AgenticV3Reader
from ingest.readers.agentic_flat import AgenticFlatReader
from tests.ingest.readers._support import (
    check_only_contract_errors,
    doc_of,
    fixture_files,
    load,
    mutated,
    named,
    point,
    read_point,
)

V3 = AgenticV3Reader()
FLAT = AgenticFlatReader()
TP8_C16 = "inferencex/agentic_agg/kimik2.7_tp8_sweep_29337493492/kimik2.7_tp8_conc16_kvdram-lmcache_fp4_vllm_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_mi355x-amds_01.json"
TP4_C1 = "inferencex/agentic_agg/kimik2.7_tp4_sweep_29003473063/kimik2.7_tp4_conc1_kvnone_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc1_mi355x-amds_01.json"
FLAT_ON = "inferencex/agentic_agg/dsr1_b200_multiturn_pareto_input/agg_dsr1_tp4_users128_offloadon_fp4_vllm_tp4-ep4-dpafalse_disagg-false_spec-none_conc128_b200-dgxc-slurm_5.json"
FLAT_OFF = "inferencex/agentic_agg/dsr1_b200_multiturn_pareto_input/agg_dsr1_tp8_users512_offloadoff_fp4_vllm_tp8-ep8-dpafalse_disagg-false_spec-none_conc512_b200-dgxc-slurm_8.json"


def test_v3_is_flattened_like_inferencex_app() -> None:
    row = read_point(V3, TP8_C16)
    expected = {
        Col.SCHEMA_VARIANT: "agentic_v3",
        Col.SCENARIO: "agentic-coding",
        Col.HW: "mi355x",  # cluster:mi355x-amds -> drop up to ':' -> first '-' segment
        Col.HW_LABEL: "cluster:mi355x-amds",
        Col.RUNNER: "mi355x-amds_01",
        Col.CONC: 16,
        Col.MODEL_PREFIX: "kimik2.7",
        Col.TP: 8,
        Col.PP: 1,
        Col.EP: 1,
        Col.NUM_GPUS: 8,
        Col.ISL: None,
        Col.OSL: None,
        Col.KV_OFFLOADING: "dram",
        Col.KV_OFFLOAD_BACKEND: "lmcache",
        Col.KV_OFFLOAD_BACKEND_VERSION: "aaf7c0d3",
        Col.ALLOCATED_CPU_DRAM_GB: 2399.0,
        Col.NUM_REQUESTS_TOTAL: 1607,
        Col.NUM_REQUESTS_SUCCESSFUL: 720,
        Col.INTVTY_DEFINITION: "inv_itl_percentile",
        Col.KV_CACHE_POOL_TOKENS: 2802611,
        Col.ARM_LABEL: "TP8 EP1 | no spec | kv dram/lmcache",
    }
    assert {k: row[k] for k in expected} == expected
    # request_metrics.throughput.per_gpu.total_tput_tps is the dashboard's tput_per_gpu
    assert row[Col.TPUT_PER_GPU] == 2884.88854
    assert row[Col.TPUT_PER_GPU] == pytest.approx(23079.10832 / 8, rel=1e-6)  # total / (tp*pp)
    assert row[Col.OUTPUT_TPUT_PER_GPU] == 26.37711
    # p50 -> median; latencies already in seconds
    assert (row[Col.MEDIAN_TTFT], row[Col.P95_E2EL], row[Col.P75_ITL]) == (
        31.8222,
        379.71806,
        0.07525,
    )
    assert row[Col.MEDIAN_TPOT] == row[Col.MEDIAN_ITL] == 0.0652
    # intvty = 1 / pXX ITL (slow tail): 1 / 0.09073 = 11.0217 vs stored 11.0219 (5-dp rounding)
    assert row[Col.P90_INTVTY] == 11.0219
    assert row[Col.P90_INTVTY] == pytest.approx(1 / 0.09073, rel=1e-4)
    # error rate = records_error_dropped / records_total = 1 / 1607 (warmup drops are not errors)
    assert row[Col.ERROR_RATE] == pytest.approx(1 / 1607)
    assert row[Col.WARNINGS] == ["1 failed request(s): InvalidInferenceResultError=1"]
    assert row[Col.REQUEST_THROUGHPUT] == 0.19917  # qps.mean over 1-second windows
    assert row[Col.GPU_PREFIX_CACHE_HIT_RATE] == 0.48253
    assert row[Col.EXTERNAL_PREFIX_CACHE_HIT_RATE] == 0.47029
    assert row[Col.OVERALL_PREFIX_CACHE_HIT_RATE] == 0.95283
    assert row[Col.THEORETICAL_CACHE_HIT_RATE] == 0.96476
    assert row[Col.PEAK_GPU_KV_USAGE] == 0.99459
    assert row[Col.MEAN_INPUT_LEN] == 115257.87639
    assert row[Col.DURATION] == 3628.88487


def test_v3_tp4_without_pp_and_with_an_empty_backend_string() -> None:
    row = read_point(V3, TP4_C1)
    assert (row[Col.TP], row[Col.PP], row[Col.NUM_GPUS], row[Col.CONC]) == (4, 1, 4, 1)
    assert (row[Col.KV_OFFLOADING], row[Col.KV_OFFLOAD_BACKEND]) == ("none", None)
    # 1350.20976 tok/s/GPU = 5400.83902 / 4
    assert row[Col.TPUT_PER_GPU] == pytest.approx(5400.83902 / 4, rel=1e-6)
    # no top-level kv_cache_pool_tokens in this sweep: server_metrics.kv_cache.gpu_total_tokens
    assert row[Col.KV_CACHE_POOL_TOKENS] == 1854204
    assert row[Col.ERROR_RATE] == 0.0
    assert row[Col.ARM_LABEL] == "TP4 EP1 | no spec | kv none"


def _multinode_doc() -> dict[str, Any]:
    # A multinode `_conc<N>` row built from the real single-node one (no such fixture exists):
    # prefill/decode fields added, tp = prefill_tp + decode_tp, conc only in the file name.
    doc: dict[str, Any] = copy.deepcopy(doc_of(TP8_C16))
    del doc["conc"], doc["pp"], doc["dcp_size"], doc["pcp_size"]
    doc.update(
        is_multinode=True,
        disagg=True,
        tp=8,
        ep=4,
        prefill_tp=4,
        prefill_ep=1,
        prefill_dp_attention="false",
        prefill_num_workers=1,
        decode_tp=4,
        decode_ep=4,
        decode_dp_attention="true",
        decode_num_workers=1,
        num_prefill_gpu=4,
        num_decode_gpu=4,
    )
    return doc


MULTINODE = (
    "inferencex/agentic_agg/multinode/kimik2.7_fp4_vllm_prefill-tp4-pp1-dcp1-pcp1-ep1-dpfalse-nw1"
    "_decode-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw1_disagg-true_spec-none_conc8x16_gb200-nv_2_conc16.json"
)


def test_v3_multinode_conc_file() -> None:
    row = point(V3, named(MULTINODE), _multinode_doc())
    assert row[Col.CONC] == 16  # from the `_conc16.json` suffix, since the JSON lacks it
    assert row[Col.RUNNER] == "gb200-nv_2"
    assert (row[Col.TP], row[Col.EP], row[Col.DP_ATTENTION]) == (8, 4, False)
    assert (row[Col.PREFILL_TP], row[Col.DECODE_EP], row[Col.DECODE_DP_ATTENTION]) == (4, 4, True)
    assert row[Col.NUM_GPUS] == 8  # num_prefill_gpu + num_decode_gpu
    assert row[Col.TPUT_PER_GPU] == 2884.88854
    assert row[Col.ARM_LABEL] == "P1xTP4 D1xTP4EP4dpa disagg | no spec | kv dram/lmcache"


def test_flat_offload_on_row() -> None:
    row = read_point(FLAT, FLAT_ON)
    expected = {
        Col.SCHEMA_VARIANT: "agentic_flat",
        Col.SCENARIO: "agentic-coding",
        Col.HW: "b200",
        Col.RUNNER: "b200-dgxc-slurm_5",
        Col.CONC: 128,  # users
        Col.TP: 4,
        Col.EP: 4,
        Col.NUM_GPUS: 4,
        Col.KV_OFFLOADING: "dram",  # offload_mode "on"
        Col.SPEC_DECODING: "none",
        Col.NUM_REQUESTS_SUCCESSFUL: 150,
        Col.NUM_REQUESTS_TOTAL: 284,  # with warm-up, as the file says (issue 27 item 7)
        Col.ERROR_RATE: None,  # no error count: never derived from 150/284
        Col.INTVTY_DEFINITION: "inv_itl_percentile",
    }
    assert {k: row[k] for k in expected} == expected
    # tput_per_gpu = total_tput_tps / tp = 5507.215535024883 / 4 = 1376.8039
    assert row[Col.TPUT_PER_GPU] == pytest.approx(5507.215535024883 / 4)
    # *_ttlt (time to last token) is the end-to-end latency
    assert row[Col.MEDIAN_E2EL] == 616.6989467144012
    # per-request itl is the decode latency; intvty = 1 / median_itl = 1 / 0.07802767934914631
    assert row[Col.MEDIAN_TPOT] == row[Col.MEDIAN_ITL] == 0.07802767934914631
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1 / 0.07802767934914631)
    assert row[Col.P999_INTVTY] == pytest.approx(1 / 0.14863721505039415)
    assert row[Col.EXTERNAL_PREFIX_CACHE_HIT_RATE] == 0.06892953810578882
    assert row[Col.WARNINGS] is None  # the total is stored, so nothing is left unsaid


def test_flat_offload_off_row() -> None:
    row = read_point(FLAT, FLAT_OFF)
    assert (row[Col.KV_OFFLOADING], row[Col.CONC], row[Col.TP]) == ("none", 512, 8)


def test_flat_row_that_carries_percentile_of_inverse_intvty() -> None:
    src, doc = load(FLAT_ON)
    # Older ledgers stored p90 of per-request 1/ITL: the fast tail, not 1 / p90 ITL.
    row = point(FLAT, src, {**doc, "median_intvty": 13.1, "p90_intvty": 16.4})
    assert row[Col.INTVTY_DEFINITION] == "percentile_of_inverse"
    assert (row[Col.MEDIAN_INTVTY], row[Col.P90_INTVTY], row[Col.P99_INTVTY]) == (13.1, 16.4, None)
    # no tpot, so normalize cannot mix in 1 / p99 TPOT under the same definition
    assert (row[Col.MEDIAN_TPOT], row[Col.MEDIAN_ITL]) == (None, 0.07802767934914631)


def test_unknown_offload_mode_is_rejected() -> None:
    src, doc = load(FLAT_ON)
    with pytest.raises(ParseError) as info:
        FLAT.read(src, {**doc, "offload_mode": "maybe"})
    assert info.value.field == "offload_mode"


def test_v3_and_flat_sniff_apart() -> None:
    assert V3.sniff(*load(TP8_C16)) and not FLAT.sniff(*load(TP8_C16))
    assert FLAT.sniff(*load(FLAT_ON)) and not V3.sniff(*load(FLAT_ON))


def test_every_agentic_fixture_ingests() -> None:
    v3 = [
        read_point(V3, rel)
        for rel in fixture_files("inferencex/agentic_agg/kimik2.7_*/kimik*.json")
    ]
    flat = [
        read_point(FLAT, rel) for rel in fixture_files("inferencex/agentic_agg/dsr1_*/agg_*.json")
    ]
    assert (len(v3), len(flat)) == (10, 44)
    assert sorted({r[Col.CONC] for r in v3}) == [1, 4, 8, 16, 32, 48]
    offload = {(r[Col.TP], r[Col.KV_OFFLOADING]) for r in flat}
    assert offload == {(4, "dram"), (4, "none"), (8, "dram"), (8, "none")}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_documents_raise_only_contract_errors(data: st.DataObject) -> None:
    for reader, src, doc in (
        (V3, *load(TP8_C16)),
        (V3, named(MULTINODE), _multinode_doc()),
        (FLAT, *load(FLAT_ON)),
    ):
        check_only_contract_errors(reader, src, data.draw(mutated(doc)))


def test_v3_with_an_empty_intvty_block_rebuilds_it_from_itl() -> None:
    src, doc = load(TP4_C1)
    doc["request_metrics"]["latency"]["intvty"] = {}  # "may be {} when there is no data"
    doc["server_metrics"] = {"present": False}
    row = point(V3, src, doc)
    # 1 / p50 ITL = 1 / 0.01304
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1 / 0.01304)
    assert row[Col.INTVTY_DEFINITION] == "inv_itl_percentile"
    assert row[Col.GPU_PREFIX_CACHE_HIT_RATE] is None
    assert row[Col.WARNINGS] == ["server_metrics not present in the aggregate"]
