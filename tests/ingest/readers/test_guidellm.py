"""GuideLLM reports found in public repositories (tests/fixtures/wild/guidellm/PROVENANCE.md):
the 0.2-0.3 shape as JSON and as YAML (GuideLLM's own test asset, and two users' runs), and a 0.8
(`metadata.version` 2) report with two constant-rate benchmarks. Expected values are worked out by hand from the files' own numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.pipeline import ingest_paths
from ingest.readers.base import SourceFile
from ingest.readers.guidellm import GuideLLMReader
from ingest.store import Store
from tests.ingest.readers._support import FIXTURES, check_only_contract_errors, mutated, source

READER = GuideLLMReader()
WILD = FIXTURES / "wild" / "guidellm"
OLD = "wild/guidellm/vllm-project_guidellm_a1fe883/benchmarks_stripped"
V2 = "wild/guidellm/llm-d_llm-d-benchmark_d4c7822/guidellm_report_v2.json"


Points = dict[tuple[str, Any], dict[str, Any]]


@pytest.fixture(scope="module")
def pts(tmp_path_factory: pytest.TempPathFactory) -> Points:
    """The stored points of the three reports, keyed by file name and load."""
    st = Store(tmp_path_factory.mktemp("guidellm") / "store")
    rep = ingest_paths([WILD], st, run_id="wild")
    assert [r.path for r in rep.rejected] == []
    assert rep.accepted == 6  # 1 + 1 + 1 + 1 + 2 benchmarks
    rows = st.points(["wild"]).iter_rows(named=True)
    return {(Path(r[Col.SOURCE_PATH]).name, r[Col.CONC] or r[Col.REQUEST_RATE]): r for r in rows}


def test_every_benchmark_of_each_report_is_a_point(pts: Points) -> None:
    assert sorted(pts) == [
        ("benchmark-results.yaml", 1),  # args.strategy.type_ synchronous: concurrency 1
        ("benchmarks.json", 10.0),  # args.strategy {type_: constant, rate: 10.0}
        ("benchmarks_stripped.json", 1),
        ("benchmarks_stripped.yaml", 1),
        ("guidellm_report_v2.json", 2.0),  # config.strategy {type_: constant, rate: 2.0}
        ("guidellm_report_v2.json", 4.0),
    ]
    for p in pts.values():
        assert p[Col.SCHEMA_VARIANT] == "guidellm"


def test_the_0_3_report_json(pts: Points) -> None:
    p = pts[("benchmarks_stripped.json", 1)]
    assert (p[Col.CONC], p[Col.REQUEST_RATE]) == (1, None)
    assert p[Col.MODEL] == "example_model"  # worker.backend_model (anonymised upstream)
    # request_loader.data "prompt_tokens=256,output_tokens=128"
    assert (p[Col.ISL], p[Col.OSL]) == (256, 128)
    # output_token_count.successful.total_sum 5888 over duration 29.997201442718506 s
    assert p[Col.OUTPUT_TPUT] == pytest.approx(5888 / 29.997201442718506)  # 196.28 tok/s
    # prompt_token_count.successful.total_sum 11827 over the same window
    assert p[Col.INPUT_TPUT] == pytest.approx(11827 / 29.997201442718506)
    assert p[Col.TOTAL_TPUT] == pytest.approx((5888 + 11827) / 29.997201442718506)
    # time_to_first_token_ms.successful.median 16.38054847717285 ms, p99 21.281957626342773 ms
    assert p[Col.MEDIAN_TTFT] == pytest.approx(0.01638054847717285)
    assert p[Col.P99_TTFT] == pytest.approx(0.021281957626342773)
    # inter_token_latency_ms.successful.median 4.9241227427805505 ms is the TPOT
    assert p[Col.MEDIAN_TPOT] == pytest.approx(0.0049241227427805505)
    assert p[Col.MEDIAN_ITL] == pytest.approx(0.0049241227427805505)
    assert p[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 4.9241227427805505)  # 203.08 tok/s/user
    # request_latency is in seconds already: median 0.6424565315246582
    assert p[Col.MEDIAN_E2EL] == pytest.approx(0.6424565315246582)
    # request_totals {successful 46, errored 0, incomplete 1}: the incomplete one was cut off
    assert (p[Col.NUM_REQUESTS_SUCCESSFUL], p[Col.NUM_REQUESTS_TOTAL], p[Col.ERROR_RATE]) == (
        46,
        46,
        0.0,
    )
    meta = json.loads(p[Col.METADATA])
    assert (meta["tool"], meta["tool_version"], meta["incomplete_requests"]) == (
        "guidellm",
        "0.2-0.3",
        1,
    )
    assert meta["profile"] == "sweep"
    # GuideLLM's own rate-distribution means are kept: output_tokens_per_second.successful.mean
    assert meta["guidellm_output_tokens_per_second_mean"] == 198.13346751788123


def test_two_users_0_3_runs(pts: Points) -> None:
    sync = pts[("benchmark-results.yaml", 1)]
    # worker.backend_model; request_loader.data '{"type": "emulated", "prompt_tokens": 512, ...}'
    assert (sync[Col.MODEL], sync[Col.ISL], sync[Col.OSL]) == ("llama-3-2-3b", 512, 128)
    # output_token_count.successful.total_sum 1792 over duration 57.26882600784302 s
    assert sync[Col.OUTPUT_TPUT] == pytest.approx(1792 / 57.26882600784302)  # 31.29 tok/s
    # time_to_first_token_ms median 410.4878902435303, inter_token_latency_ms 27.580242457352284
    assert sync[Col.MEDIAN_TTFT] == pytest.approx(0.4104878902435303)
    assert sync[Col.MEDIAN_TPOT] == pytest.approx(0.027580242457352284)
    assert sync[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 27.580242457352284)  # 36.26
    # request_totals {successful 14, errored 0, incomplete 1}
    assert (sync[Col.NUM_REQUESTS_SUCCESSFUL], sync[Col.NUM_REQUESTS_TOTAL]) == (14, 14)
    rate = pts[("benchmarks.json", 10.0)]
    assert (rate[Col.MODEL], rate[Col.CONC], rate[Col.ISL]) == ("Qwen/Qwen3-0.6B", None, 128)
    # 75008 output tokens over 60.01022434234619 s; TTFT median 1005.8121681213379 ms
    assert rate[Col.OUTPUT_TPUT] == pytest.approx(75008 / 60.01022434234619)  # 1249.9 tok/s
    assert rate[Col.MEDIAN_TTFT] == pytest.approx(1.0058121681213379)
    assert rate[Col.P99_TTFT] == pytest.approx(1.0194225311279297)
    assert rate[Col.MEDIAN_TPOT] == pytest.approx(0.010425182778065599)
    # 586 successful, 23 incomplete (cut off at the 60 s limit: not failures)
    assert (rate[Col.NUM_REQUESTS_SUCCESSFUL], rate[Col.ERROR_RATE]) == (586, 0.0)
    meta = json.loads(rate[Col.METADATA])
    assert (meta["profile"], meta["incomplete_requests"]) == ("async", 23)


def test_the_yaml_report_reads_as_its_json_twin(pts: Points) -> None:
    js, ym = pts[("benchmarks_stripped.json", 1)], pts[("benchmarks_stripped.yaml", 1)]
    for col in (
        Col.MODEL,
        Col.OUTPUT_TPUT,
        Col.MEDIAN_TTFT,
        Col.P99_TTFT,
        Col.MEDIAN_TPOT,
        Col.MEDIAN_INTVTY,
        Col.NUM_REQUESTS_SUCCESSFUL,
        Col.ISL,
    ):
        assert ym[col] == pytest.approx(js[col]), col


def test_the_0_8_report_with_two_constant_rates(pts: Points) -> None:
    r2, r4 = pts[("guidellm_report_v2.json", 2.0)], pts[("guidellm_report_v2.json", 4.0)]
    for p in (r2, r4):
        assert p[Col.CONC] is None
        assert p[Col.MODEL] == "e2e-mock-model"  # benchmarks[].config.backend.model
        assert (p[Col.NUM_REQUESTS_SUCCESSFUL], p[Col.NUM_REQUESTS_TOTAL]) == (2, 2)
        # config.spec.data[0] is synthetic but 2 turns per conversation: no nominal lengths
        assert (p[Col.ISL], p[Col.OSL]) == (None, None)
        meta = json.loads(p[Col.METADATA])
        assert (meta["tool_version"], meta["report_schema"]) == (
            "0.8.0.dev18",
            "metadata.version 2",
        )
        assert meta["concurrency_cap"] == 10240  # strategy.max_concurrency with the rate
    # 16 output tokens over duration 5.01964807510376 s and 2.5186119079589844 s
    assert r2[Col.OUTPUT_TPUT] == pytest.approx(16 / 5.01964807510376)  # 3.19 tok/s
    assert r4[Col.OUTPUT_TPUT] == pytest.approx(16 / 2.5186119079589844)  # 6.35 tok/s
    # time_to_first_token_ms.successful.median 11.276006698608398 and 9.419918060302734 ms
    assert r2[Col.MEDIAN_TTFT] == pytest.approx(0.011276006698608398)
    assert r4[Col.MEDIAN_TTFT] == pytest.approx(0.009419918060302734)
    # inter_token_latency_ms.successful.median 1.0459763663155692 and 0.9067058563232422 ms
    assert r2[Col.MEDIAN_TPOT] == pytest.approx(0.0010459763663155692)
    assert r4[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 0.9067058563232422)  # 1102.9


def _v2() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / V2).read_text())
    return doc


def _read(doc: Any, name: str = "benchmarks.json") -> Any:
    src = SourceFile(FIXTURES / name, name, "constructed", json.dumps(doc).encode())
    assert READER.sniff(src, doc)
    return READER.read(src, doc)


def test_a_report_whose_run_stopped_before_a_benchmark_finished_is_refused_by_name() -> None:
    doc = _v2()
    doc["benchmarks"] = []
    with pytest.raises(ParseError, match="GuideLLM report without request statistics"):
        _read(doc)


def test_a_benchmark_without_metrics_is_refused_and_the_others_kept() -> None:
    doc = _v2()
    del doc["benchmarks"][1]["metrics"]
    res = _read(doc)
    assert len(res.points) == 1 and res.points[0][Col.REQUEST_RATE] == 2.0
    assert [(r.row, r.field) for r in res.rejects] == [("benchmarks[1]", "benchmarks[1].metrics")]
    assert "GuideLLM report without request statistics" in res.rejects[0].reason
    for b in doc["benchmarks"]:
        b.pop("metrics", None)
    with pytest.raises(ParseError, match="GuideLLM report without request statistics"):
        _read(doc)


def test_a_benchmark_where_every_request_failed_names_the_counts() -> None:
    doc = _v2()
    doc["benchmarks"][0]["metrics"]["request_totals"] = {
        "successful": 0,
        "errored": 2,
        "incomplete": 0,
        "total": 2,
    }
    res = _read(doc)
    assert len(res.points) == 1
    assert res.rejects[0].reason == (
        "GuideLLM benchmark with no successful requests (2 errored, 0 incomplete)"
    )


@pytest.mark.parametrize(
    ("strategy", "load"),
    [
        ({"type_": "synchronous"}, (1, None)),
        ({"type_": "concurrent", "streams": 16}, (16, None)),
        ({"type_": "throughput", "max_concurrency": 64}, (64, None)),
        ({"type_": "throughput"}, (None, float("inf"))),
        ({"type_": "poisson", "rate": 7.5}, (None, 7.5)),
    ],
)
def test_each_profile_gives_its_load_coordinate(
    strategy: dict[str, Any], load: tuple[Any, Any]
) -> None:
    doc = _v2()
    doc["benchmarks"] = doc["benchmarks"][:1]
    doc["benchmarks"][0]["config"]["strategy"] = strategy
    point = _read(doc).points[0]
    assert (point.get(Col.CONC), point.get(Col.REQUEST_RATE)) == load


def test_an_unknown_strategy_is_refused_naming_it() -> None:
    doc = _v2()
    doc["benchmarks"][0]["config"]["strategy"] = {"type_": "replay"}
    res = _read(doc)
    assert "GuideLLM strategy 'replay' has no load coordinate" in res.rejects[0].reason


def test_yaml_sniffing_needs_the_guidellm_markers() -> None:
    text = (FIXTURES / f"{OLD}.yaml").read_bytes()
    assert READER.sniff(source(f"{OLD}.yaml"), None)
    other = SourceFile(Path("config.yaml"), "config.yaml", "x", b"server:\n  model: m\n")
    assert not READER.sniff(other, None)
    broken = SourceFile(Path("b.yaml"), "b.yaml", "x", text[:2000] + b"\n  - : : [\n")
    assert READER.sniff(broken, None)
    with pytest.raises(ParseError, match="GuideLLM YAML report is not valid YAML"):
        READER.read(broken, None)


def _slim(doc: dict[str, Any]) -> dict[str, Any]:
    """The report without its per-request samples (which the reader does not read)."""
    for b in doc["benchmarks"]:
        b.pop("requests", None)
    return doc


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_reports_raise_only_contract_errors(data: st.DataObject) -> None:
    src = source(V2)
    check_only_contract_errors(READER, src, data.draw(mutated(_slim(_v2()))))
    old = source(f"{OLD}.json")
    check_only_contract_errors(READER, old, data.draw(mutated(_slim(json.loads(old.text())))))


def test_a_0_5_benchmark_without_duration_uses_the_measured_window() -> None:
    # 0.4-0.5 benchmarks have no `duration`: the window is scheduler_metrics.measure_*_time
    # (in this 0.8 file 1786678153.2722828 - 1786678148.2526348 = its duration 5.0196 s)
    doc = _v2()
    doc["metadata"] = {"version": 1, "guidellm_version": "0.5.0"}
    for b in doc["benchmarks"]:
        del b["duration"]
    point = _read(doc).points[0]
    assert point[Col.DURATION] == pytest.approx(1786678153.2722828 - 1786678148.2526348)
    assert point[Col.OUTPUT_TPUT] == pytest.approx(16 / (1786678153.2722828 - 1786678148.2526348))
    assert point[Col.METADATA]["tool_version"] == "0.5.0"


def test_the_html_and_csv_guidellm_writes_beside_its_report_are_named_not_refused() -> None:
    # Constructed from the exporters' source: html.py injects `window.<camelCase key> = <json>;`
    # for run_info, workload_details and benchmarks; csv.py starts with a row of group names.
    html = (
        b'<html><head><script>window.runInfo = {"model": {"name": "m"}};\n'
        b"window.workloadDetails = {};\nwindow.benchmarks = [];\n</script></head></html>"
    )
    csv = b"Run Info,Run Info,Run Info\nRun ID,Run Index,Profile\n,,\nabc,0,{}\n"
    for name, data, kind in (("benchmarks.html", html, "HTML"), ("benchmarks.csv", csv, "CSV")):
        src = SourceFile(Path(name), name, "x", data)
        assert READER.sniff(src, None)
        res = READER.read(src, None)
        assert res.points == [] and res.notes[0].startswith(f"GuideLLM {kind} report: ")
    other = SourceFile(
        Path("page.html"), "page.html", "x", b"<script>window.benchmarks = [];</script>"
    )
    assert not READER.sniff(other, None)


def test_a_0_4_plus_yaml_report_with_sorted_keys_reads_as_the_json() -> None:
    # GuideLLM 0.4+ saves YAML as `yaml.dump(report.model_dump())` (sorted keys: metadata and
    # every benchmark's type_ come last); the same dump of the real 0.8 report:
    text = yaml.dump(_v2()).encode()
    assert text.find(b"type_: generative_benchmark") > 4096
    src = SourceFile(FIXTURES / "benchmarks.yaml", "benchmarks.yaml", "x", text)
    assert READER.sniff(src, None)
    from_yaml = READER.read(src, None).points
    from_json = _read(_v2()).points
    assert [p[Col.REQUEST_RATE] for p in from_yaml] == [2.0, 4.0]
    assert from_yaml == from_json


def test_a_guidellm_0_1_report_is_named_and_refused() -> None:
    # Constructed from GuideLLM 0.1's GuidanceReport model: benchmarks[].benchmarks[] of
    # {mode, rate, results, errors, concurrencies}, per-request results and no statistics.
    doc: dict[str, Any] = {
        "benchmarks": [
            {
                "benchmarks": [
                    {
                        "mode": "synchronous",
                        "rate": None,
                        "results": [],
                        "errors": [],
                        "concurrencies": [],
                    }
                ],
                "args": {},
            }
        ]
    }
    with pytest.raises(ParseError, match=r"GuideLLM 0\.1 report"):
        _read(doc)


def test_a_yaml_that_only_mentions_guidellm_is_not_claimed() -> None:
    # e.g. a deployment's values file pinning the harness version
    values = b"harness:\n  image: guidellm\n  guidellm_version: 0.3.0\n"
    assert not READER.sniff(SourceFile(Path("values.yaml"), "values.yaml", "x", values), None)
