"""aiperf raw trees: the 0.8 and pre-0.8 `profile_export_aiperf.json`, the CSV, and the tree as
enrichment (inside an InferenceX `agentic_` artifact) or as a point of its own."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError, SchemaError
from ingest.readers._aiperf_export import metrics_row, stats_from_csv, stats_from_json
from ingest.readers.aiperf import AiperfTreeReader
from tests.ingest.readers._support import doc_of, mutated, norm, source
from tests.ingest.readers._unit_support import unit

READER = AiperfTreeReader()
TP4 = "aiperf/inferencex_kimik2.7_tp4_sweep_29003473063"
RF16 = "kimik2.7_tp4_conc16_kvdram-lmcache_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_mi355x-amds_04"
RF1 = "kimik2.7_tp4_conc1_kvnone_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc1_mi355x-amds_01"
DIR16, DIR1 = f"{TP4}/agentic_{RF16}", f"{TP4}/agentic_{RF1}"
OLD = "aiperf/ai-dynamo_examples_artifacts_run1"


def _tree(replace: dict[str, bytes], drop: tuple[str, ...] = ()) -> list[Any]:
    """The conc-1 tree as a standalone directory with some files replaced or dropped."""
    keep = [f for f in unit(DIR1, rename=RF1) if f.name not in replace and f.name not in drop]
    return keep + unit(DIR1, rename=RF1, extra=replace)[-len(replace) :] if replace else keep


def _point(files: list[Any]) -> dict[str, Any]:
    assert READER.sniff_unit(files)
    res = READER.read_unit(files)
    assert len(res.points) == 1 and not res.rejects, res.rejects
    return norm(files[0], res.points[0])


def test_v08_json_stats_in_seconds_and_interactivity_as_inverse_itl() -> None:
    stats, variant = stats_from_json(doc_of(f"{DIR16}/profile_export_aiperf.json"), "p.json")
    row = metrics_row(stats, "p.json")
    assert variant == "aiperf"
    assert row[Col.MEDIAN_TTFT] == pytest.approx(52990.515656999996 / 1000)  # p50 TTFT, ms -> s
    assert row[Col.P90_ITL] == row[Col.P90_TPOT] == pytest.approx(113.71235802782812 / 1000)
    # p90_intvty = 1 / p90 ITL (slow tail); the bmk_agentic aggregate of this run publishes 8.79412
    assert row[Col.P90_INTVTY] == pytest.approx(1000 / 113.71235802782812)
    assert round(row[Col.P90_INTVTY], 5) == 8.79412 and round(row[Col.MEDIAN_INTVTY], 5) == 13.85645
    assert row[Col.INTVTY_DEFINITION] == "inv_itl_percentile"
    assert (row[Col.TOTAL_TPUT], row[Col.OUTPUT_TPUT]) == (16192.562766868063, 158.5366987952679)
    assert (row[Col.NUM_REQUESTS_SUCCESSFUL], row[Col.NUM_REQUESTS_TOTAL]) == (
        659,
        659,
    )  # no error records
    assert (row[Col.TOTAL_INPUT_TOKENS], row[Col.TOTAL_OUTPUT_TOKENS]) == (58363897, 577074)
    # theoretical_prefix_cache_hit sum / count = 867297 / 910397 (the aggregate publishes 0.95266)
    assert row[Col.THEORETICAL_CACHE_HIT_RATE] == 867297 / 910397


def test_csv_of_the_same_run_agrees_within_its_rounding() -> None:
    json_row = metrics_row(
        stats_from_json(doc_of(f"{DIR16}/profile_export_aiperf.json"), "p")[0], "p"
    )
    csv_row = metrics_row(
        stats_from_csv(source(f"{DIR16}/profile_export_aiperf.csv").text(), "p.csv"), "p.csv"
    )
    assert csv_row.keys() == json_row.keys()
    for key, value in json_row.items():
        if isinstance(value, float):
            assert csv_row[key] == pytest.approx(value, rel=2e-3, abs=6e-3), (
                key
            )  # CSV keeps 2 decimals
        else:
            assert csv_row[key] == value, key


def test_pre_08_records_schema() -> None:
    stats, variant = stats_from_json(doc_of(f"{OLD}/profile_export_aiperf.json"), "old.json")
    row = metrics_row(stats, "old.json")
    assert variant == "aiperf_legacy"
    # request_count 89 are the completed requests; error_request_count 11 cancelled -> 100 issued
    assert (row[Col.NUM_REQUESTS_SUCCESSFUL], row[Col.NUM_REQUESTS_TOTAL]) == (89, 100)
    assert row[Col.MEDIAN_TTFT] == pytest.approx(2.369317693)  # records.ttft.p50
    assert row[Col.OUTPUT_TPUT] == 2320.7222350404572
    # no input throughput in the old schema: total_isl / benchmark_duration = 48950 / 9.317788951
    assert row[Col.INPUT_TPUT] == pytest.approx(48950 / 9.317788951)
    assert row[Col.MEAN_INPUT_LEN] == 550.0
    csv_stats = stats_from_csv(source(f"{OLD}/profile_export_aiperf.csv").text(), "old.csv")
    assert csv_stats["error_request_count"].values == {"avg": 11.0}
    assert (
        csv_stats["time_to_first_token"].values["p50"] == 2369.32
        and csv_stats["time_to_first_token"].unit == "ms"
    )


def test_inferencex_raw_tree_enriches_its_aggregate_and_has_its_own_point() -> None:
    files = unit(DIR16)
    assert READER.sniff_unit(files)
    res = READER.read_unit(files)
    # Its own point stands when the bmk_agentic_ aggregate is missing; the pipeline prefers
    # the aggregate when both are there (tests/ingest/test_run_download.py).
    assert len(res.points) == 1 and res.rejects == []
    assert res.points[0][Col.CONC] == 16
    e = res.enrich
    assert (e[Col.PEAK_GPU_KV_USAGE], e[Col.NUM_PREEMPTIONS]) == (1.0, 63.0)  # from the server CSV
    assert (
        json.loads(e[Col.SERVER_FLAGS])["kv-transfer-config"]["kv_connector"]
        == "LMCacheMPConnector"
    )
    assert res.consumed[0].endswith("profile_export_aiperf.json")
    assert {c.rsplit("/", 1)[-1] for c in res.consumed} == {
        "profile_export_aiperf.json",
        "profile_export_aiperf.csv",
        "server_metrics_export.csv",
        "vllm_command.txt",
        "benchmark_command.txt",
    }  # lmcache_command.txt and workload_distribution_summary.txt are left to the auxiliary reader


def test_the_same_tree_alone_is_a_point_identified_by_name_and_commands() -> None:
    p = _point(unit(DIR16, rename=RF16))
    assert (p[Col.MODEL], p[Col.MODEL_PREFIX], p[Col.HW], p[Col.RUNNER]) == (
        "amd/Kimi-K2.7-Code-MXFP4",
        "kimik2.7",
        "mi355x",
        "mi355x-amds_04",
    )
    assert (p[Col.TP], p[Col.NUM_GPUS], p[Col.CONC], p[Col.SCENARIO]) == (
        4,
        4,
        16,
        "agentic-coding",
    )
    assert (p[Col.KV_OFFLOADING], p[Col.KV_OFFLOAD_BACKEND], p[Col.PRECISION]) == (
        "dram",
        "lmcache",
        "fp4",
    )
    assert p[Col.TPUT_PER_GPU] == 16192.562766868063 / 4
    assert p[Col.SCHEMA_VARIANT] == "aiperf" and p[Col.ERROR_RATE] == 0.0
    assert round(p[Col.GPU_PREFIX_CACHE_HIT_RATE], 5) == 0.09426
    assert p[Col.ISL] is None and p[Col.OSL] is None  # trace replay: no nominal lengths


def test_a_tree_with_only_the_csv_is_still_a_point() -> None:
    p = _point(_tree({}, drop=("profile_export_aiperf.json",)))
    assert p[Col.SCHEMA_VARIANT] == "aiperf_csv" and p[Col.CONC] == 1 and p[Col.NUM_GPUS] == 4


def test_old_tree_without_gpu_count_keeps_its_totals_and_says_why() -> None:
    res = READER.read_unit(unit(OLD))
    assert len(res.points) == 1 and res.rejects == []
    assert res.points[0].get(Col.NUM_GPUS) is None and res.points[0].get(Col.TP) is None
    assert any("GPU count is unknown" in n and "vllm_command.txt" in n for n in res.notes)


def test_old_tree_with_its_server_command_is_a_point() -> None:
    files = unit(OLD, extra={"vllm_command.txt": b"vllm serve openai/gpt-oss-20b --port 9000 "})
    p = _point(files)
    assert (p[Col.MODEL], p[Col.CONC], p[Col.OSL], p[Col.SCENARIO]) == (
        "openai/gpt-oss-20b",
        100,
        250,
        "fixed-seq-len",
    )
    assert p[Col.ERROR_RATE] == pytest.approx(0.11)  # 11 cancelled of 100
    assert p[Col.TPUT_PER_GPU] == pytest.approx(48950 / 9.317788951 + 2320.7222350404572)  # TP1
    assert p[Col.WARNINGS] == ["aiperf errors: 11 x RequestCancellationError"]
    assert p[Col.SCHEMA_VARIANT] == "aiperf_legacy"


def test_a_non_time_latency_unit_is_refused() -> None:
    doc = doc_of(f"{DIR16}/profile_export_aiperf.json")
    doc["time_to_first_token"]["unit"] = "tokens"
    with pytest.raises(ParseError) as err:
        metrics_row(stats_from_json(doc, "p.json")[0], "p.json")
    assert err.value.field == "time_to_first_token"


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("profile_export_aiperf.json", b'{"request_count": {"unit": "requests", "avg": 1}, '),
        ("profile_export_aiperf.csv", b"Metric,avg,min\nRequest Latency (ms),fast,1\n"),
        ("profile_export_aiperf.json", b'{"request_count": {"unit": "requests", "avg": "many"}}'),
    ],
)
def test_broken_exports_raise_parse_errors(name: str, data: bytes) -> None:
    other = "profile_export_aiperf.csv" if name.endswith(".json") else "profile_export_aiperf.json"
    files = _tree({name: data}, drop=(other,))
    assert READER.sniff_unit(files)
    with pytest.raises(ParseError):
        READER.read_unit(files)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_profile_exports_raise_only_contract_errors(data: st.DataObject) -> None:
    rel = data.draw(
        st.sampled_from([f"{DIR1}/profile_export_aiperf.json", f"{OLD}/profile_export_aiperf.json"])
    )
    doc = data.draw(mutated(doc_of(rel)))
    files = _tree({"profile_export_aiperf.json": json.dumps(doc).encode()})
    if not READER.sniff_unit(files):
        return
    try:
        res = READER.read_unit(files)
    except ParseError:
        return
    for point in res.points:
        with contextlib.suppress(SchemaError):
            norm(files[0], point)
