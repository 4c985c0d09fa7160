"""kubernetes-sigs inference-perf stage reports from the project's KubeCon NA 2025 demo
(tests/fixtures/wild/inference_perf/PROVENANCE.md): two 7-stage constant-rate sweeps, vLLM and
vLLM + EAGLE3. Expected values are worked out by hand from the files' own numbers."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError, SchemaError
from ingest.pipeline import ingest_paths
from ingest.readers.base import SourceFile
from ingest.readers.inference_perf import InferencePerfReader
from ingest.store import Store
from tests.ingest.readers._support import FIXTURES, mutated, norm

READER = InferencePerfReader()
WILD = FIXTURES / "wild" / "inference_perf"
VLLM = WILD / "kubecon-na-2025_vllm"
EAGLE = WILD / "kubecon-na-2025_vllm+eagle"
Points = dict[tuple[str, float], dict[str, Any]]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Points, Any]:
    st = Store(tmp_path_factory.mktemp("inference_perf") / "store")
    rep = ingest_paths([WILD], st, run_id="wild")
    assert [r.path for r in rep.rejected] == []
    rows = st.points(["wild"]).iter_rows(named=True)
    pts = {(Path(r[Col.SOURCE_PATH]).parent.name, r[Col.REQUEST_RATE]): r for r in rows}
    return pts, rep


def test_one_point_per_stage_at_its_requested_rate(ingested: tuple[Points, Any]) -> None:
    pts, rep = ingested
    assert rep.accepted == 14
    # load_summary.requested_rate of stage_0 .. stage_6
    assert sorted(r for d, r in pts if d == VLLM.name) == [
        1.0,
        31.4,
        61.79,
        92.19,
        122.59,
        152.98,
        183.38,
    ]
    assert sorted(r for d, r in pts if d == EAGLE.name) == [
        1.0,
        18.16,
        35.33,
        52.49,
        69.65,
        86.81,
        103.98,
    ]
    for p in pts.values():
        assert p[Col.CONC] is None and p[Col.SCHEMA_VARIANT] == "inference_perf"
        # the reports name no model and no config.yaml was committed beside them
        assert p[Col.MODEL] is None
        meta = json.loads(p[Col.METADATA])
        assert (meta["tool"], meta["tool_version"]) == ("inference-perf", "0.2+")
    # the summary over all stages is named, not stored, and the missing model is said
    notes = {(n.path, n.reason) for n in rep.notes}
    assert any("summary over all stages, not a point" in r for _, r in notes)
    assert any("no inference-perf config.yaml beside the stage reports" in r for _, r in notes)


def test_the_first_and_last_stage_of_the_vllm_sweep(ingested: tuple[Points, Any]) -> None:
    pts, _ = ingested
    s0, s6 = pts[(VLLM.name, 1.0)], pts[(VLLM.name, 183.38)]
    assert json.loads(s6[Col.METADATA])["stage_report"] == "stage_6_lifecycle_metrics.json"
    # successes.throughput.output_tokens_per_sec, as written
    assert s0[Col.OUTPUT_TPUT] == 64.23350089997027
    assert s6[Col.OUTPUT_TPUT] == 6431.058168023075
    # successes.latency.time_to_first_token.median, seconds
    assert s0[Col.MEDIAN_TTFT] == 0.031026913959067315
    assert s6[Col.MEDIAN_TTFT] == 2.88654515898088  # saturated: queueing shows in TTFT
    assert s6[Col.P99_TTFT] == 3.3474315829982517
    # time_per_output_token.median is the TPOT; interactivity 1 / TPOT
    assert s0[Col.MEDIAN_TPOT] == 0.003468046240533825
    assert s0[Col.MEDIAN_INTVTY] == pytest.approx(1 / 0.003468046240533825)  # 288.35 tok/s/user
    assert s6[Col.MEDIAN_INTVTY] == pytest.approx(1 / 0.009318436472947427)  # 107.31
    # normalized_time_per_output_token: E2E-normalised interactivity 1 / median, 1 / p90
    assert s0[Col.MEDIAN_E2E_NORM_INTVTY] == pytest.approx(1 / 0.007457680346515889)
    assert s0[Col.P90_E2E_NORM_INTVTY] == pytest.approx(1 / 0.00841689943131713)
    # successes.count 60 and 11002, failures.count 0
    assert (s0[Col.NUM_REQUESTS_SUCCESSFUL], s0[Col.NUM_REQUESTS_TOTAL]) == (60, 60)
    assert (s6[Col.NUM_REQUESTS_SUCCESSFUL], s6[Col.ERROR_RATE]) == (11002, 0.0)
    assert s0[Col.INPUT_TPUT] == 207.6018611826434
    assert s0[Col.TOTAL_TPUT] == 271.83536208261364


def test_the_eagle_sweep(ingested: tuple[Points, Any]) -> None:
    pts, _ = ingested
    s0, s6 = pts[(EAGLE.name, 1.0)], pts[(EAGLE.name, 103.98)]
    assert (s0[Col.OUTPUT_TPUT], s6[Col.OUTPUT_TPUT]) == (62.70378838194921, 4277.6078637021365)
    assert (s0[Col.MEDIAN_TTFT], s6[Col.MEDIAN_TTFT]) == (0.03660908149322495, 4.550775859039277)
    assert s0[Col.MEDIAN_TPOT] == 0.005779756271450008
    assert s6[Col.MEDIAN_INTVTY] == pytest.approx(1 / 0.016044314683838885)  # 62.33
    # inter_token_latency is every streamed gap: the ITL, not the TPOT
    assert s0[Col.MEDIAN_ITL] == 3.8421014323830605e-05


def _src(path: Path, doc: Any | None = None) -> SourceFile:
    data = path.read_bytes() if doc is None else json.dumps(doc).encode()
    rel = f"{path.parent.name}/{path.name}"
    return SourceFile(path, rel, path.parent.name, data)


def test_a_summary_alone_is_refused_naming_the_tool() -> None:
    summary = _src(VLLM / "summary_lifecycle_metrics.json")
    assert READER.sniff_unit([summary])
    with pytest.raises(ParseError, match="inference-perf summary report without per-stage"):
        READER.read_unit([summary])


def test_a_stage_without_successes_is_refused_and_the_others_kept() -> None:
    doc = json.loads((VLLM / "stage_1_lifecycle_metrics.json").read_text())
    doc["successes"]["count"] = 0
    doc["failures"]["count"] = 1800
    files = [
        _src(VLLM / "stage_0_lifecycle_metrics.json"),
        _src(VLLM / "stage_1_lifecycle_metrics.json", doc),
    ]
    res = READER.read_unit(files)
    assert [p[Col.REQUEST_RATE] for p in res.points] == [1.0]
    assert [(r.row, r.field) for r in res.rejects] == [("stage 1", "successes.count")]
    assert "inference-perf stage 1: no successful requests (1800 failed)" in res.rejects[0].reason


def test_a_0_1_stage_takes_its_rate_and_model_from_config_yaml() -> None:
    # inference-perf 0.1 wrote load_summary {count} only; config.yaml holds the stages
    doc = json.loads((VLLM / "stage_2_lifecycle_metrics.json").read_text())
    doc["load_summary"] = {"count": doc["load_summary"]["count"]}
    config = (
        b"load:\n  type: constant\n  stages:\n  - rate: 1\n    duration: 60\n"
        b"  - rate: 5\n    duration: 60\n  - rate: 10\n    duration: 60\n"
        b"server:\n  type: vllm\n  model_name: meta-llama/Llama-3.1-8B-Instruct\n"
    )
    files = [
        _src(VLLM / "stage_2_lifecycle_metrics.json", doc),
        SourceFile(VLLM / "config.yaml", f"{VLLM.name}/config.yaml", VLLM.name, config),
    ]
    res = READER.read_unit(files)
    (point,) = res.points
    assert (
        point[Col.REQUEST_RATE] == 10.0 and point[Col.MODEL] == "meta-llama/Llama-3.1-8B-Instruct"
    )
    assert point[Col.METADATA]["tool_version"] == "0.1"
    assert f"{VLLM.name}/config.yaml" in res.consumed
    # without the config the stage has no rate, and says where to find it
    res = READER.read_unit(files[:1])
    assert res.points == []
    assert "put config.yaml beside the reports" in res.rejects[0].reason


def test_a_concurrency_stage_is_a_concurrency_point() -> None:
    doc = json.loads((VLLM / "stage_0_lifecycle_metrics.json").read_text())
    doc["load_summary"]["concurrency"] = 8
    (point,) = READER.read_unit([_src(VLLM / "stage_0_lifecycle_metrics.json", doc)]).points
    assert (point[Col.CONC], point.get(Col.REQUEST_RATE)) == (8, None)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_stage_reports_raise_only_parse_errors(data: st.DataObject) -> None:
    path = VLLM / "stage_3_lifecycle_metrics.json"
    doc = data.draw(mutated(json.loads(path.read_text())))
    files = [_src(path, doc)]
    if READER.sniff_unit(files):
        with contextlib.suppress(ParseError):
            res = READER.read_unit(files)
            for point in res.points:
                with contextlib.suppress(SchemaError):
                    norm(files[0], point)


def test_a_renamed_stage_report_is_still_a_stage_and_the_summary_still_not() -> None:
    # What the data says decides: a stage report has load_summary.requested_rate, the summary not
    stage = VLLM / "stage_4_lifecycle_metrics.json"
    summary = VLLM / "summary_lifecycle_metrics.json"
    files = [
        SourceFile(WILD / "run/rate-122.json", "run/rate-122.json", "run", stage.read_bytes()),
        SourceFile(WILD / "run/all.json", "run/all.json", "run", summary.read_bytes()),
    ]
    res = READER.read_unit(files)
    assert [p[Col.REQUEST_RATE] for p in res.points] == [122.59]
    assert res.consumed == ["run/rate-122.json", "run/all.json"]
    assert "run/all.json: inference-perf summary over all stages" in res.notes[1]
