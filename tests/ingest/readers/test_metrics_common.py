"""Shared server-metric helpers: counter names, RESULT_FILENAME identity, spec and summary rows."""

from __future__ import annotations

import pytest

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._metrics_common import (
    SPEC_ACCEPTED,
    SPEC_DRAFTS,
    SPEC_PER_POS,
    MetricStore,
    family,
    identity_from_name,
    server_summary,
    spec_row,
    store_spec_row,
)


def test_counter_family_drops_total_once() -> None:
    assert family("vllm:spec_decode_num_drafts_total") == "vllm:spec_decode_num_drafts"
    assert family("vllm:spec_decode_num_drafts") == "vllm:spec_decode_num_drafts"
    assert family("x_total_total") == "x_total"


def test_identity_from_an_agentic_result_filename() -> None:
    row = identity_from_name(
        "agentic_kimik2.7_tp4_conc16_kvdram-lmcache_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse"
        "_disagg-false_spec-none_conc16_mi355x-amds_04"
    )
    assert row == {
        Col.MODEL_PREFIX: "kimik2.7",
        Col.PRECISION: "fp4",
        Col.FRAMEWORK: "vllm",
        Col.TP: 4,
        Col.EP: 1,
        Col.DP_ATTENTION: False,
        Col.DISAGG: False,
        Col.SPEC_DECODING: "none",
        Col.CONC: 16,
        Col.DCP_SIZE: 1,
        Col.PCP_SIZE: 1,
        Col.RUNNER: "mi355x-amds_04",
        Col.HW_LABEL: "mi355x-amds",
        Col.KV_OFFLOADING: "dram",
        Col.KV_OFFLOAD_BACKEND: "lmcache",
    }


def test_identity_from_a_legacy_multiturn_name_maps_offload_on_off() -> None:
    row = identity_from_name(
        "agentic_dsr1_tp8_bs16_offloadon_fp4_vllm_tp8-ep8-dpafalse_disagg-false_spec-none_conc16_b200-dgxc-slurm_7"
    )
    assert (row[Col.KV_OFFLOADING], row[Col.EP], row[Col.HW_LABEL]) == (
        "dram",
        8,
        "b200-dgxc-slurm",
    )
    assert Col.KV_OFFLOAD_BACKEND not in row and Col.PP not in row


@pytest.mark.parametrize("name", ["ai-dynamo_examples_artifacts_run1", "capture", "agentic_", ""])
def test_names_that_are_not_result_filenames_give_nothing(name: str) -> None:
    assert identity_from_name(name) == {}


def test_spec_row_without_drafts_has_counters_but_no_al() -> None:
    row = spec_row(0.0, 0.0, 0.0, {}, "prometheus_delta")
    assert (
        row[Col.SPEC_DRAFTS] == 0.0
        and Col.AL_MEASURED not in row
        and Col.DRAFT_ACCEPTANCE_RATE not in row
    )
    assert spec_row(None, None, None, {0: 1.0}, "x") == {}
    # a missing position in the middle reads as rate 0, K stays max position + 1
    assert spec_row(10.0, 30.0, 9.0, {0: 6.0, 2: 1.0}, "x")[Col.ACCEPT_RATE_PER_POS] == [
        0.6,
        0.0,
        0.1,
    ]


def test_summary_normalizes_percent_usage_and_prefers_the_kv_gauge() -> None:
    store = MetricStore()
    store.add_gauge_max("vllm:gpu_cache_usage_perc", "a:1", {}, 0.5)
    store.add_gauge_max("vllm:kv_cache_usage_perc", "a:1", {}, 95.0)  # an exporter in percent
    store.add_gauge_max("vllm:cpu_kv_cache_usage_perc", "a:1", {}, 0.25)
    store.add_counter("vllm:prefix_cache_hits_total", "a:1", {}, 30.0)
    store.add_counter("vllm:prefix_cache_queries", "a:1", {}, 40.0)
    row = server_summary(store)
    assert (row[Col.PEAK_GPU_KV_USAGE], row[Col.PEAK_CPU_KV_USAGE]) == (0.95, 0.25)
    # hits / queries = 30 / 40; without prompt_tokens_by_source InferenceX's vLLM adapter also
    # publishes it as the overall rate (backends/vllm.py: `elif gpu_rate is not None`)
    assert (
        row[Col.GPU_PREFIX_CACHE_HIT_RATE],
        row[Col.PREFIX_CACHE_HIT_RATE],
        row[Col.OVERALL_PREFIX_CACHE_HIT_RATE],
    ) == (0.75, 0.75, 0.75)
    # `a:1` and `http://a:1/metrics/` are one server; the `_total` spelling is the same counter
    assert store.add_counter("vllm:prefix_cache_hits", "http://a:1/metrics/", {}, 30.0) is False
    assert (
        store.duplicate_urls == {"http://a:1/metrics/"}
        and store.counter_sum("vllm:prefix_cache_hits") == 30.0
    )


def test_a_huge_position_label_is_a_parse_error_not_a_billion_element_list() -> None:
    store = MetricStore()
    store.add_counter(SPEC_DRAFTS, "a:1", {}, 10.0)
    store.add_counter(SPEC_ACCEPTED, "a:1", {}, 15.0)
    store.add_counter(SPEC_PER_POS, "a:1", {"position": "0"}, 9.0)
    store.add_counter(SPEC_PER_POS, "a:1", {"position": "1"}, 6.0)
    row = store_spec_row(store, "prometheus_snapshot", "m.txt")
    assert row[Col.ACCEPT_RATE_PER_POS] == [0.9, 0.6]
    store.add_counter(SPEC_PER_POS, "a:1", {"position": "999999999"}, 1.0)
    with pytest.raises(ParseError) as err:
        store_spec_row(store, "prometheus_snapshot", "m.txt")
    assert (err.value.path, err.value.field) == ("m.txt", SPEC_PER_POS)
    assert "'999999999'" in str(err.value)
