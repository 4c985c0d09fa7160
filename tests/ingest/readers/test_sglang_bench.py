"""SGLang `sglang.bench_serving --output-file` JSON Lines, on real files from public repositories.

The fixtures and where they come from: tests/fixtures/wild/sglang_bench_serving/PROVENANCE.md.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.readers.base import JsonDocs
from ingest.readers.bench_serving import BenchServingReader
from ingest.readers.sglang_bench import SglangBenchServingReader
from ingest.store import Store
from tests.ingest.readers._support import (
    FIXTURES,
    check_only_contract_errors,
    fixture_files,
    mutated,
    named,
    norm,
    read_all,
    source,
)

SGL = SglangBenchServingReader()
WILD = "wild/sglang_bench_serving"
# 2024 line (SGLang ~0.4.0, Dec 2024): no TPOT, no p99s; a request-rate sweep, max_concurrency null.
OLD = f"{WILD}/datacrunch_h200_llama33_70b_online.jsonl"
# 2024 line with the default --request-rate inf, which json.dumps writes as the constant Infinity.
OLD_INF = f"{WILD}/datacrunch_h200_deepseek_dp_mla.jsonl"
# Late-2025 line (SGLang 0.5.5.post3): TPOT, p99s, server_info, tag; --max-concurrency 8.
NEW = f"{WILD}/tonyli15_agg_n100_in128_out128_c8.jsonl"
VLLM_RAW = "inferencex/raw_bench_serving/gptoss120b_multinode/concurrency_16_req_rate_inf_gpus_16_ctx_8_gen_8.json"
_INFINITY_REJECT = "non-standard JSON constant Infinity"


def _ingest(tmp_path: Path, path: Path) -> tuple[Any, pl.DataFrame]:
    st = Store(tmp_path / "store")
    rep = ingest_paths([path], st, run_id="sgl")
    return rep, st.points(["sgl"])


def _lenient(rel: str) -> tuple[Any, JsonDocs]:
    """A fixture parsed by Python's json module, which reads Infinity as float('inf')."""
    src = source(rel)
    lines = [line for line in src.text().splitlines() if line.strip()]
    docs = tuple(json.loads(line) for line in lines)
    return src, JsonDocs(docs, tuple(range(1, len(docs) + 1)))


def test_old_schema_request_rate_sweep_end_to_end(tmp_path: Path) -> None:
    rep, pts = _ingest(tmp_path, FIXTURES / OLD)
    assert rep.rejected == [] and rep.accepted == 7  # 7 lines, 7 points
    assert set(pts[Col.SCHEMA_VARIANT]) == {"sglang_bench_serving"}
    assert set(pts[Col.FRAMEWORK]) == {"sglang"}
    # The load is the offered request rate: max_concurrency is null on every line.
    assert pts[Col.CONC].to_list() == [None] * 7
    assert sorted(pts[Col.REQUEST_RATE].to_list()) == [1.0, 2.0, 4.0, 4.0, 8.0, 8.0, 16.0]
    first = pts.filter(pl.col(Col.REQUEST_RATE) == 1.0).row(0, named=True)
    # line 1: output_throughput as written
    assert first[Col.OUTPUT_TPUT] == pytest.approx(537.4142851849319)
    # no input_throughput in the 2024 line: total_input_tokens / duration = 152612 / 298.36758 s
    # = 511.48989 tok/s (bench_serving's own formula); total = 511.48989 + 537.41429 = 1048.90417
    assert first[Col.INPUT_TPUT] == pytest.approx(152612 / 298.3675805060193)
    assert first[Col.TOTAL_TPUT] == pytest.approx(1048.9041720592909)
    # request throughput = completed / duration = 300 / 298.36758 s = 1.00547 req/s
    assert first[Col.REQUEST_THROUGHPUT] == pytest.approx(300 / 298.3675805060193)
    # median TTFT 85.74514742940664 ms -> 0.0857451 s; E2E 7819.046192569658 ms -> 7.819046 s
    assert first[Col.MEDIAN_TTFT] == pytest.approx(0.08574514742940664)
    assert first[Col.MEDIAN_E2EL] == pytest.approx(7.819046192569658)
    assert first[Col.MEDIAN_ITL] == pytest.approx(0.013638956006616354)
    # the 2024 line has no TPOT, so no interactivity; and no accept_length
    assert first[Col.MEDIAN_TPOT] is None and first[Col.MEDIAN_INTVTY] is None
    assert first[Col.AL_MEASURED] is None
    assert (first[Col.ISL], first[Col.OSL]) == (1024, 1024)
    # 152612 input tokens / 300 completed requests (random_range_ratio 0.0: lengths up to 1024)
    assert first[Col.MEAN_INPUT_LEN] == pytest.approx(152612 / 300)
    assert any("random_range_ratio=0" in w for w in first[Col.WARNINGS])
    assert json.loads(first[Col.METADATA])["total_output_tokens_retokenized"] == 160192
    # the two ShareGPT lines have no nominal ISL/OSL: line 6 is ShareGPT at 4 req/s,
    # total = 269081 / 304.126221 s + 746.0750970739618 = 884.7675 + 746.0751 = 1630.8426
    share = pts.filter(pl.col(Col.ISL).is_null()).sort(Col.REQUEST_RATE)
    assert share[Col.REQUEST_RATE].to_list() == [4.0, 8.0]
    assert share[Col.TOTAL_TPUT][0] == pytest.approx(269081 / 304.126221193932 + 746.0750970739618)


def _new_point() -> dict[str, Any]:
    src, docs = _lenient(NEW)
    res, rows = read_all(SGL, src, docs)
    assert res.rejects == [] and len(rows) == 1
    return rows[0]


def test_new_schema_concurrency_point() -> None:
    row = _new_point()
    # --max-concurrency 8 is the load; request_rate Infinity then adds nothing
    assert row[Col.CONC] == 8 and row[Col.REQUEST_RATE] is None
    # the measured mean in-flight count (7.7716) stays out of conc, in metadata
    meta = json.loads(row[Col.METADATA])
    assert meta["measured_concurrency"] == pytest.approx(7.771601081305936)
    assert meta["request_rate"] == "inf" and meta["tag"] == "agg_n100_in128_out128_c8"
    assert meta["server_info"]["version"] == "0.5.5.post3"
    assert row[Col.OUTPUT_TPUT] == pytest.approx(1415.8340658528766)
    assert row[Col.TOTAL_TPUT] == pytest.approx(2823.6496539865216)  # total_throughput
    # server_info: tp_size 1, pp_size 1, dp_size 1 -> 1 GPU, so per GPU = total
    assert (row[Col.TP], row[Col.NUM_GPUS]) == (1, 1)
    assert row[Col.TPUT_PER_GPU] == pytest.approx(2823.6496539865216)
    # median TTFT 22.6287511177361 ms -> 0.0226288 s
    assert row[Col.MEDIAN_TTFT] == pytest.approx(0.0226287511177361)
    # median interactivity = 1 / (5.097699021510045 ms / 1000) = 196.1669 tok/s/user
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1 / (5.097699021510045 / 1000))
    assert row[Col.INTVTY_DEFINITION] == "inv_tpot_percentile"
    # p99 E2E 711.8622327689087 ms -> 0.71186 s
    assert row[Col.P99_E2EL] == pytest.approx(0.7118622327689087)
    assert row[Col.MODEL] == "Qwen/Qwen2.5-3B-Instruct"
    assert (row[Col.ISL], row[Col.OSL]) == (128, 128)
    # accept_length null: no AL; server_info says speculative_algorithm null: no spec decoding
    assert row[Col.AL_MEASURED] is None and row[Col.SPEC_DECODING] == "none"


def test_new_schema_end_to_end(tmp_path: Path) -> None:
    rep, pts = _ingest(tmp_path, FIXTURES / NEW)
    assert [r.reason for r in rep.rejected if _INFINITY_REJECT in r.reason] == []
    row = pts.row(0, named=True)
    assert (rep.accepted, row[Col.CONC]) == (1, 8)
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1 / (5.097699021510045 / 1000))


def test_infinity_request_rate_lines_ingest_as_an_inf_request_rate(tmp_path: Path) -> None:
    # json.dumps writes the default `--request-rate inf` as the bare constant Infinity.
    rep, pts = _ingest(tmp_path, FIXTURES / OLD_INF)
    assert rep.rejected == []
    assert pts.height == 1
    row = pts.row(0, named=True)
    assert row[Col.CONC] is None and row[Col.REQUEST_RATE] == math.inf
    assert row[Col.MEDIAN_TTFT] == pytest.approx(10.014104524045251)  # 10014.104524 ms
    assert "by request rate" in row[Col.ARM_LABEL]


def test_old_schema_infinite_rate_without_concurrency_is_an_inf_request_rate() -> None:
    src, docs = _lenient(OLD_INF)
    res, rows = read_all(SGL, src, docs)
    assert res.rejects == [] and len(rows) == 1
    row = rows[0]
    # request_rate Infinity and max_concurrency null: every request at once
    assert row[Col.CONC] is None and row[Col.REQUEST_RATE] == math.inf
    assert row[Col.OUTPUT_TPUT] == pytest.approx(12412.394674113431)
    # 10000 input tokens / 412.49091 s + 12412.39467 output tok/s = 12436.63754
    assert row[Col.TOTAL_TPUT] == pytest.approx(10000 / 412.49091206211597 + 12412.394674113431)
    assert row[Col.MEDIAN_TTFT] == pytest.approx(10.014104524045251)  # 10014.104524 ms


def _with(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out.update(changes)
    return out


def test_accept_length_and_the_speculative_method_from_server_info() -> None:
    src, docs = _lenient(NEW)
    base = docs.docs[0]
    info = dict(base["server_info"])
    info.update(
        speculative_algorithm="EAGLE3",
        speculative_num_steps=3,
        speculative_draft_model_path="lmsys/sglang-EAGLE3-Qwen2.5-3B",
    )
    spec = _with(base, accept_length=2.87, server_info=info)
    _res, (row,) = read_all(SGL, src, JsonDocs((spec,), (1,)))
    assert row[Col.AL_MEASURED] == pytest.approx(2.87) and row[Col.AL_SOURCE] == "bench_json"
    assert (row[Col.SPEC_DECODING], row[Col.SPEC_METHOD]) == ("mtp", "eagle3")
    assert (row[Col.NUM_SPEC_TOKENS], row[Col.DRAFT_MODEL]) == (3, "lmsys/sglang-EAGLE3-Qwen2.5-3B")
    # without server_info the line does not say which method: the measured AL says spec
    # decoding ran (normalize: "detected", method unknown, with a warning)
    bare = _with(base, accept_length=2.87)
    del bare["server_info"]
    _res, (row,) = read_all(SGL, src, JsonDocs((bare,), (1,)))
    assert row[Col.AL_MEASURED] == pytest.approx(2.87)
    assert row[Col.SPEC_METHOD] is None and row[Col.SPEC_DECODING] == "detected"
    assert any("measured AL 2.87" in w for w in row[Col.WARNINGS])


def test_a_bad_line_is_rejected_with_its_number_and_the_others_ingest(tmp_path: Path) -> None:
    lines = (FIXTURES / OLD).read_bytes().splitlines(keepends=True)
    bad = json.loads(lines[2])
    bad["completed"] = 0
    lines[2] = (json.dumps(bad) + "\n").encode()
    lines[4] = b'["not", "a", "result"]\n'
    path = tmp_path / "sweep.jsonl"
    path.write_bytes(b"".join(lines))
    rep, pts = _ingest(tmp_path, path)
    assert pts.height == 5
    assert sorted((r.path, r.field) for r in rep.rejected) == [
        ("sweep.jsonl#line 3", "completed"),
        ("sweep.jsonl#line 5", ""),
    ]


def test_a_repeated_line_is_kept_once() -> None:
    src, docs = _lenient(NEW)
    res, rows = read_all(SGL, src, JsonDocs(docs.docs * 2, (1, 2)))
    assert len(rows) == 1
    assert [(r.row, "line 1" in r.reason) for r in res.rejects] == [("line 2", True)]


@pytest.mark.parametrize(
    ("rate", "conc", "expected_rate", "meta_rate"),
    [
        ("inf", None, math.inf, None),
        ("inf", 16, None, "inf"),
        (2.5, 16, 2.5, None),
        ("trace", 16, None, "trace"),
    ],
)
def test_request_rate_forms(rate: Any, conc: Any, expected_rate: Any, meta_rate: Any) -> None:
    src, docs = _lenient(NEW)
    doc = _with(docs.docs[0], request_rate=rate, max_concurrency=conc)
    _res, (row,) = read_all(SGL, src, JsonDocs((doc,), (1,)))
    assert (row[Col.CONC], row[Col.REQUEST_RATE]) == (conc, expected_rate)
    assert json.loads(row[Col.METADATA]).get("request_rate") == meta_rate


def test_vllm_results_stay_with_the_vllm_reader(tmp_path: Path) -> None:
    for rel in fixture_files("inferencex/raw_bench_serving/**/*.json"):
        src = source(rel)
        assert not SGL.sniff(src, json.loads(src.text())), rel
    rep, pts = _ingest(tmp_path, FIXTURES / VLLM_RAW)
    assert rep.rejected == [] and pts[Col.SCHEMA_VARIANT].to_list() == ["bench_serving_ms"]
    # and the vLLM reader does not claim the newer SGLang line either, although it has
    # max_concurrency and *_ms latencies: no harness claims another's file, whatever the order
    src, docs = _lenient(NEW)
    assert not BenchServingReader().sniff(src, docs.docs[0])


@pytest.mark.parametrize("doc", [None, 3, "x", [], {}, {"completed": 1}, JsonDocs((), ())])
def test_sniffer_refuses_odd_documents(doc: object) -> None:
    assert not SGL.sniff(named("odd.jsonl"), doc)


def test_a_single_object_json_file_is_one_point() -> None:
    src, docs = _lenient(OLD)
    row = norm(src, SGL.read(src, docs.docs[0]).points[0])
    assert row[Col.REQUEST_RATE] == 1.0


_NEW_DOC = _lenient(NEW)[1].docs[0]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_lines_raise_only_contract_errors(data: st.DataObject) -> None:
    doc = data.draw(mutated(_NEW_DOC))
    src = source(NEW)
    check_only_contract_errors(SGL, src, doc)
    # in a multi-line file a broken line costs only itself
    res = SGL.read(src, JsonDocs((doc, _NEW_DOC), (1, 2)))
    assert len(res.points) >= 1 and all(r.row in ("line 1", "line 2") for r in res.rejects)
