"""aiperf `server_metrics_export.{json,csv}`: Σ over engines and servers, one server under two URLs
counted once, AL per formats.md §3.9 and the §3.7 server summary.

No real JSON dump exists (PROVENANCE: the blobs are missing), so JSON inputs are built here from
the documented shape (§3.5); the CSV is tested on the five real exports.
"""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._metrics_common import endpoint_key
from ingest.readers.server_metrics import (
    ServerMetricsCsvReader,
    ServerMetricsJsonReader,
    read_csv_dump,
)
from tests.ingest.readers._support import fixture_files, mutated, named, source
from tests.ingest.readers._unit_support import mutated_text, text_file

JSON_READER, CSV_READER = ServerMetricsJsonReader(), ServerMetricsCsvReader()
TP4 = "aiperf/inferencex_kimik2.7_tp4_sweep_29003473063"
CONC16 = f"{TP4}/agentic_kimik2.7_tp4_conc16_kvdram-lmcache_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_mi355x-amds_04/server_metrics_export.csv"
CONC1 = f"{TP4}/agentic_kimik2.7_tp4_conc1_kvnone_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc1_mi355x-amds_01/server_metrics_export.csv"
T0 = 1_759_813_200_000_000_000
LOCAL, LOOPBACK, OTHER = (
    "http://localhost:8888/metrics",
    "http://127.0.0.1:8888/metrics",  # the same server, listed explicitly by the MTP script
    "http://localhost:8889/metrics",  # a second server: summed
)


def _counter(
    url: str, engine: str, total: float, slices: list[dict[str, Any]] | None = None, **labels: str
) -> dict[str, Any]:
    return {
        "endpoint_url": url,
        "labels": {"engine": engine, "model_name": "m", **labels},
        "stats": {"total": total, "rate": total / 100.0},
        "timeslices": slices or [],
    }


def _per_server(url: str, engine: str, values: list[float], **labels: str) -> list[dict[str, Any]]:
    return [_counter(url, engine, v, **labels) for v in values]


def dump() -> dict[str, Any]:
    """Two engines on :8888 (also listed as 127.0.0.1:8888) and one engine on :8889."""
    servers = [(LOCAL, "0"), (LOCAL, "1"), (OTHER, "0"), (LOOPBACK, "0"), (LOOPBACK, "1")]
    per = {  # (url, engine) -> drafts, draft tokens, accepted, per-position accepted, preemptions
        (LOCAL, "0"): (1000, 3000, 1500, [700, 500, 300], 3),
        (LOCAL, "1"): (800, 2400, 1100, [550, 350, 200], 4),
        (OTHER, "0"): (200, 600, 300, [150, 100, 50], 0),
    }
    per[(LOOPBACK, "0")], per[(LOOPBACK, "1")] = per[(LOCAL, "0")], per[(LOCAL, "1")]
    slices = [
        {"start_ns": T0, "end_ns": T0 + 10**9, "total": 10.0, "rate": 10.0},
        {"start_ns": T0 + 10**9, "end_ns": T0 + 2 * 10**9, "total": 12.0, "rate": 12.0},
        {
            "start_ns": T0 + 2 * 10**9,
            "end_ns": T0 + 2 * 10**9 + 4 * 10**8,
            "total": 3.0,
            "is_complete": False,
        },
    ]
    metrics: dict[str, Any] = {
        "vllm:spec_decode_num_drafts": {
            "type": "counter",
            "unit": "",
            "series": [
                _counter(
                    u,
                    e,
                    per[(u, e)][0],
                    slices if (u, e) in ((LOCAL, "0"), (LOOPBACK, "0")) else None,
                )
                for u, e in servers
            ],
        },
        # aiperf normally drops `_total`; a dump that keeps it must read the same.
        "vllm:spec_decode_num_draft_tokens_total": {
            "type": "counter",
            "series": [_counter(u, e, per[(u, e)][1]) for u, e in servers],
        },
        "vllm:spec_decode_num_accepted_tokens": {
            "type": "counter",
            "series": [_counter(u, e, per[(u, e)][2]) for u, e in servers],
        },
        "vllm:spec_decode_num_accepted_tokens_per_pos": {
            "type": "counter",
            "series": [
                _counter(u, e, v, position=str(i))
                for u, e in servers
                for i, v in enumerate(per[(u, e)][3])
            ],
        },
        "vllm:num_preemptions": {
            "type": "counter",
            "series": [_counter(u, e, per[(u, e)][4]) for u, e in servers],
        },
        "vllm:prompt_tokens_by_source": {
            "type": "counter",
            "series": [
                _counter(LOCAL, "0", 600.0, source="local_cache_hit"),
                _counter(LOCAL, "0", 300.0, source="external_kv_transfer"),
                _counter(LOCAL, "0", 100.0, source="local_compute"),
            ],
        },
        "vllm:kv_cache_usage_perc": {
            "type": "gauge",
            "series": [
                {
                    "endpoint_url": u,
                    "labels": {"engine": e},
                    "stats": {"avg": 0.5, "max": m},
                    "timeslices": [{"start_ns": T0, "avg": 0.5, "max": 0.6}]
                    if e == "0" and u == LOCAL
                    else [],
                }
                for (u, e), m in zip(servers, [0.91, 0.97, 0.5, 0.91, 0.97], strict=True)
            ],
        },
        "vllm:e2e_request_latency_seconds": {
            "type": "histogram",
            "series": [
                {
                    "endpoint_url": LOCAL,
                    "labels": {},
                    "stats": {"count": 19, "sum": 40.0},
                    "buckets": {"+Inf": 19},
                }
            ],
        },
        "process_cpu_seconds": {"type": "counter", "series": [_counter(LOCAL, "", 5.0, slices)]},
    }
    return {
        "schema_version": "1.0",
        "aiperf_version": "0.8.0",
        "summary": {
            "endpoint_info": {
                u: {"first_update_ns": T0, "total_fetches": 10} for u in (LOCAL, LOOPBACK, OTHER)
            }
        },
        "metrics": metrics,
    }


def test_endpoint_key_collapses_loopback_names_only() -> None:
    assert (
        endpoint_key(LOCAL)
        == endpoint_key(LOOPBACK)
        == endpoint_key("0.0.0.0:8888")
        == endpoint_key("localhost:8888/metrics/")
    )
    assert endpoint_key(LOCAL) != endpoint_key(OTHER) != endpoint_key("http://node2:8888/metrics")


def test_json_dump_sums_engines_and_servers_and_counts_a_second_url_once() -> None:
    src = named("agentic_x/aiperf_artifacts/server_metrics_export.json")
    doc = dump()
    assert JSON_READER.sniff(src, doc)
    res = JSON_READER.read(src, doc)
    e = res.enrich
    # drafts 1000 + 800 + 200 = 2000 (the 127.0.0.1 copies of :8888 are not added again)
    assert (e[Col.SPEC_DRAFTS], e[Col.SPEC_DRAFT_TOKENS], e[Col.SPEC_ACCEPTED_TOKENS]) == (
        2000.0,
        6000.0,
        2900.0,
    )
    assert e[Col.AL_MEASURED] == pytest.approx(1 + 2900 / 2000)  # 2.45
    assert e[Col.DRAFT_ACCEPTANCE_RATE] == pytest.approx(2900 / 6000)
    # per position: (700+550+150)/2000, (500+350+100)/2000, (300+200+50)/2000; 1 + Σ = AL
    assert e[Col.ACCEPT_RATE_PER_POS] == pytest.approx([0.7, 0.475, 0.275])
    assert 1 + sum(e[Col.ACCEPT_RATE_PER_POS]) == pytest.approx(e[Col.AL_MEASURED])
    assert e[Col.AL_SOURCE] == "aiperf_server_metrics"
    assert e[Col.NUM_PREEMPTIONS] == 7.0
    assert e[Col.PEAK_GPU_KV_USAGE] == 0.97
    # prompt tokens by source override the hit rates: 600/1000 local, 300/1000 external
    assert (
        e[Col.GPU_PREFIX_CACHE_HIT_RATE],
        e[Col.EXTERNAL_PREFIX_CACHE_HIT_RATE],
        e[Col.OVERALL_PREFIX_CACHE_HIT_RATE],
    ) == (0.6, 0.3, 0.9)
    assert res.points == [] and len(res.notes) == 1 and LOOPBACK in res.notes[0]


def test_json_timeslices_become_series_of_the_counted_servers() -> None:
    res = JSON_READER.read(named("d/server_metrics_export.json"), dump())
    got = sorted(
        (s["metric"], json.loads(s["labels"])["stat"], s["t"], s["value"]) for s in res.series
    )
    # drafts: two complete 1 s slices of :8888 engine 0 (the partial third is dropped; the
    # 127.0.0.1 copy is not repeated); kv usage: avg and max of one slice; process_* is noise.
    assert got == [
        ("vllm:kv_cache_usage_perc", "avg", 0.0, 0.5),
        ("vllm:kv_cache_usage_perc", "max", 0.0, 0.6),
        ("vllm:spec_decode_num_drafts", "total", 0.0, 10.0),
        ("vllm:spec_decode_num_drafts", "total", 1.0, 12.0),
    ]
    assert {json.loads(s["labels"])["server"] for s in res.series} == {endpoint_key(LOCAL)}
    assert all(s["point_key"] is None for s in res.series)


def test_a_dump_without_spec_counters_has_no_al() -> None:
    doc = dump()
    for name in [k for k in doc["metrics"] if "spec_decode" in k]:
        del doc["metrics"][name]
    e = JSON_READER.read(named("d/server_metrics_export.json"), doc).enrich
    assert Col.AL_MEASURED not in e and Col.AL_SOURCE not in e and e[Col.NUM_PREEMPTIONS] == 7.0


def _set(doc: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (["metrics"], [], "metrics"),
        (
            ["metrics", "vllm:num_preemptions", "series"],
            {"a": 1},
            "metrics.vllm:num_preemptions.series",
        ),
        (
            ["metrics", "vllm:num_preemptions", "series", 0, "stats", "total"],
            "12",
            "metrics.vllm:num_preemptions.series[0].stats.total",
        ),
        (
            ["metrics", "vllm:num_preemptions", "series", 0, "stats", "total"],
            float("inf"),
            "metrics.vllm:num_preemptions.series[0].stats.total",
        ),
        (
            ["metrics", "vllm:num_preemptions", "series", 0, "labels"],
            ["engine"],
            "metrics.vllm:num_preemptions.series[0].labels",
        ),
        (
            [
                "metrics",
                "vllm:spec_decode_num_accepted_tokens_per_pos",
                "series",
                0,
                "labels",
                "position",
            ],
            "first",
            "vllm:spec_decode_num_accepted_tokens_per_pos",
        ),
        (
            ["metrics", "vllm:spec_decode_num_drafts", "series", 0, "timeslices", 0, "total"],
            True,
            "metrics.vllm:spec_decode_num_drafts.timeslices[0].total",
        ),
    ],
)
def test_json_shape_errors_name_the_field(path: list[Any], value: Any, field: str) -> None:
    with pytest.raises(ParseError) as err:
        JSON_READER.read(named("d/server_metrics_export.json"), _set(dump(), path, value))
    assert err.value.field == field


def test_real_csv_matches_the_published_aggregate() -> None:
    src = source(CONC16)
    assert CSV_READER.sniff(src, None) and not JSON_READER.sniff(src, None)
    res = CSV_READER.read(src, None)
    e = res.enrich
    # prompt_tokens_by_source: external 46872228 + local_cache_hit 5650124 + local_compute 7417380
    total = 46872228 + 5650124 + 7417380  # = 59939732 = vllm:prompt_tokens
    assert e[Col.GPU_PREFIX_CACHE_HIT_RATE] == 5650124 / total
    assert e[Col.EXTERNAL_PREFIX_CACHE_HIT_RATE] == 46872228 / total
    assert e[Col.OVERALL_PREFIX_CACHE_HIT_RATE] == (5650124 + 46872228) / total
    # the bmk_agentic aggregate of this run publishes 0.09426 / 0.78199 / 0.87625, gpu_usage_pct 1,
    # gpu_total_tokens 1854891; preemptions (63) are not in the aggregate.
    assert [
        round(e[c], 5)
        for c in (
            Col.GPU_PREFIX_CACHE_HIT_RATE,
            Col.EXTERNAL_PREFIX_CACHE_HIT_RATE,
            Col.OVERALL_PREFIX_CACHE_HIT_RATE,
        )
    ] == [0.09426, 0.78199, 0.87625]
    assert (e[Col.PEAK_GPU_KV_USAGE], e[Col.KV_CACHE_POOL_TOKENS], e[Col.NUM_PREEMPTIONS]) == (
        1.0,
        1854891,
        63.0,
    )
    assert Col.AL_MEASURED not in e  # spec-none run: no spec-decode counters
    assert res.points == [] and res.series == []


def test_real_csv_keeps_inferencex_definitions_apart() -> None:
    res = CSV_READER.read(source(CONC16), None)
    e = res.enrich
    # InferenceX's gpu_cache_hit_rate (backends/vllm.py): hits / queries, replaced by
    # local_cache_hit / Σ prompt_tokens_by_source = 5650124 / 59939732 = 0.094264 (published 0.09426)
    assert e[Col.GPU_PREFIX_CACHE_HIT_RATE] == 5650124 / 59939732
    # prefix_cache_hit_rate stays vllm:prefix_cache_hits / vllm:prefix_cache_queries (CSV lines
    # 43-44): 124804987 / 3387936661 = 0.0368381 (tokens queried include every re-query)
    assert e[Col.PREFIX_CACHE_HIT_RATE] == 124804987 / 3387936661
    assert round(e[Col.PREFIX_CACHE_HIT_RATE], 7) == 0.0368381
    assert Col.GPU_PREFIX_CACHE_HIT_RATE_GAUGE not in e  # a V1 server has no such gauge
    # what the export measured, for attaching it: the served model, profiling-window counters
    assert res.scope == {
        "models": ["amd/Kimi-K2.7-Code-MXFP4"],
        "since_start": False,
        "prompt_tokens": 59939732.0,
        "generation_tokens": 609337.0,
    }


def test_real_csv_without_offload_has_zero_external_hits() -> None:
    e = CSV_READER.read(source(CONC1), None).enrich
    # local_cache_hit / Σ by source; the aggregate publishes 0.92475 and gpu_usage_pct 0.13776
    assert round(e[Col.GPU_PREFIX_CACHE_HIT_RATE], 5) == 0.92475
    assert e[Col.EXTERNAL_PREFIX_CACHE_HIT_RATE] == 0.0
    assert e[Col.PEAK_GPU_KV_USAGE] == 0.1378  # the CSV rounds gauges to 4 places
    assert e[Col.KV_CACHE_POOL_TOKENS] == 1854204


def test_every_real_csv_is_claimed_and_read() -> None:
    files = fixture_files("aiperf/**/server_metrics_export.csv")
    assert len(files) == 2
    for rel in files:
        assert CSV_READER.sniff(source(rel), None)
        assert CSV_READER.read(source(rel), None).enrich[Col.PEAK_GPU_KV_USAGE] > 0


def test_csv_with_spec_counters_and_duplicate_endpoint() -> None:
    header = "Endpoint,Type,Metric,Unit,total,rate,rate_avg,rate_min,rate_max,rate_std,engine,model_name,position,Description"
    rows = [
        "localhost:8888,counter,vllm:spec_decode_num_drafts,,400.0,1,1,0,1,0,0,m,,d",
        "127.0.0.1:8888,counter,vllm:spec_decode_num_drafts,,400.0,1,1,0,1,0,0,m,,d",
        "localhost:8888,counter,vllm:spec_decode_num_accepted_tokens,,520.0,1,1,0,1,0,0,m,,d",
        "localhost:8888,counter,vllm:spec_decode_num_accepted_tokens_per_pos,,300.0,1,1,0,1,0,0,m,0,d",
        "localhost:8888,counter,vllm:spec_decode_num_accepted_tokens_per_pos,,220.0,1,1,0,1,0,0,m,1,d",
    ]
    src = text_file(
        "d/server_metrics_export.csv",
        "# AIPerf Server Metrics Export (CSV)\n#\n" + "\n".join([header, *rows]) + "\n",
    )
    res = CSV_READER.read(src, None)
    # 1 + 520/400 = 2.3; per position 300/400, 220/400
    assert res.enrich[Col.AL_MEASURED] == pytest.approx(2.3)
    assert res.enrich[Col.ACCEPT_RATE_PER_POS] == pytest.approx([0.75, 0.55])
    assert "127.0.0.1:8888" in res.notes[0]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("Endpoint,Kind,Metric\nx,y,z\n", "line 1"),
        ("Endpoint,Type,Metric,Unit,total\nlocalhost:1,counter,vllm:x,,1,extra\n", "line 2"),
        ("Endpoint,Type,Metric,Unit,total\nlocalhost:1,counter,vllm:x,,lots\n", "line 2"),
        ("Endpoint,Type,Metric,Unit,max\n\nlocalhost:1,gauge,vllm:x,,nan\n", "line 3"),
        ("Endpoint,Metric,Key,Value,Description\nlocalhost:1,info\n", "line 2"),
    ],
)
def test_csv_errors_name_the_line(text: str, field: str) -> None:
    with pytest.raises(ParseError) as err:
        read_csv_dump(text, "bad.csv")
    assert err.value.field == field


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_json_dumps_raise_only_parse_errors(data: st.DataObject) -> None:
    doc = data.draw(mutated(dump()))
    src = named("d/server_metrics_export.json")
    if JSON_READER.sniff(src, doc):
        with contextlib.suppress(ParseError):
            JSON_READER.read(src, doc)


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_mutated_csv_dumps_raise_only_parse_errors(data: st.DataObject) -> None:
    src = text_file("d/server_metrics_export.csv", data.draw(mutated_text(source(CONC16).text())))
    if CSV_READER.sniff(src, None):
        with contextlib.suppress(ParseError):
            CSV_READER.read(src, None)
