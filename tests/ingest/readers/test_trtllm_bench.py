"""trtllm-bench reports found in public repositories (tests/fixtures/wild/trtllm_bench,
PROVENANCE.md there): the 1.2.0 `--report_json` of a latency run and the 0.16.0 console log of a
throughput run, read end to end through the pipeline. Every expected value is worked out by hand
from the file's own numbers (the arithmetic is in the comments)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.pipeline import ingest_paths
from ingest.readers.base import SourceFile
from ingest.readers.trtllm_bench import TrtllmBenchReader
from ingest.reading import parse_json
from ingest.store import Store

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "trtllm_bench"
READER = TrtllmBenchReader()


def _points(tmp_path: Path) -> dict[str, dict[str, Any]]:
    st = Store(tmp_path / "store")
    rep = ingest_paths([WILD], st, run_id="trt")
    # PROVENANCE.md is ours, not a result: the only file the pipeline may refuse
    assert [r.path for r in rep.rejected if not r.path.endswith("PROVENANCE.md")] == []
    assert rep.accepted == 4
    return {Path(r[Col.SOURCE_PATH]).name: r for r in st.points(["trt"]).iter_rows(named=True)}


def _src(name: str, data: bytes | None = None) -> SourceFile:
    path = WILD / name
    return SourceFile(path, name, "trtllm_bench", path.read_bytes() if data is None else data)


def test_report_json_of_a_latency_run(tmp_path: Path) -> None:
    pts = _points(tmp_path)
    p128, p1024 = pts["in128_out40_bs1.json"], pts["in1024_out40_bs1.json"]
    for p in (p128, p1024):
        assert p[Col.SCHEMA_VARIANT] == "trtllm_bench_json"
        assert p[Col.MODEL] == "Qwen/Qwen2.5-0.5B-Instruct"
        assert (p[Col.FRAMEWORK], p[Col.PRECISION]) == ("trt", "bf16")  # quantization null
        # world_info.max_batch_size 1: one request at a time, so the load is conc 1
        assert (p[Col.CONC], p[Col.REQUEST_RATE], p[Col.TP], p[Col.NUM_GPUS]) == (1, None, 1, 1)
        assert p[Col.NUM_REQUESTS_SUCCESSFUL] == 20
        meta = json.loads(p[Col.METADATA])
        assert (meta["harness"], meta["harness_version"]) == ("trtllm-bench", "1.2.0")
        assert meta["gpu_name"] == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    # dataset.isl_stats/osl_stats minimum == maximum: fixed lengths
    assert (p128[Col.ISL], p128[Col.OSL], p1024[Col.ISL], p1024[Col.OSL]) == (128, 40, 1024, 40)
    # performance.system_output_throughput_tok_s; total - output = input
    assert p128[Col.OUTPUT_TPUT] == pytest.approx(556.3859403206322)
    assert p128[Col.INPUT_TPUT] == pytest.approx(2336.820949346655 - 556.3859403206322)
    assert p128[Col.TPUT_PER_GPU] == pytest.approx(2336.820949346655)  # world_size 1
    assert p1024[Col.OUTPUT_TPUT] == pytest.approx(500.0332794023899)
    # streaming_metrics.ttft_percentiles.p50 3.676513 ms, tpot_percentiles.p50 1.71361... ms
    assert p128[Col.MEDIAN_TTFT] == pytest.approx(0.003676513)
    assert p128[Col.P99_TTFT] == pytest.approx(0.027130889999999997)
    assert p128[Col.MEDIAN_TPOT] == pytest.approx(0.0017136109743589742)
    assert p128[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 1.7136109743589742)  # 583.56 tok/s
    assert p1024[Col.MEDIAN_TTFT] == pytest.approx(0.006770105)
    assert p1024[Col.MEDIAN_TPOT] == pytest.approx(0.0018192568717948716)
    # performance.total_latency_ms 1599.893513; request_latency_percentiles_ms.p99 101.143053
    assert p1024[Col.DURATION] == pytest.approx(1.599893513)
    assert p1024[Col.P99_E2EL] == pytest.approx(0.101143053)


def test_console_report_of_a_0_16_throughput_run(tmp_path: Path) -> None:
    pts = _points(tmp_path)
    big, small = pts["result_1024_1024_3000.txt"], pts["result_128_128_30000.txt"]
    for p in (big, small):
        assert p[Col.SCHEMA_VARIANT] == "trtllm_bench_console"
        assert p[Col.MODEL] == "meta-llama/Llama-3.1-70B-Instruct"
        assert (p[Col.PRECISION], p[Col.TP], p[Col.PP], p[Col.NUM_GPUS]) == ("fp8", 8, 1, 8)
        # rate=-1 and no concurrency in the report: every request offered at once
        assert p[Col.CONC] is None and p[Col.REQUEST_RATE] == math.inf
        assert any("--set conc=N" in w for w in p[Col.WARNINGS])
        meta = json.loads(p[Col.METADATA])
        assert (meta["harness"], meta["harness_version"]) == ("trtllm-bench", "0.16.0")
        # 0.16 prints no TTFT or TPOT
        assert p[Col.MEDIAN_TTFT] is None and p[Col.MEDIAN_INTVTY] is None
    assert (big[Col.ISL], big[Col.OSL], big[Col.NUM_REQUESTS_SUCCESSFUL]) == (1024, 1024, 3000)
    assert (small[Col.ISL], small[Col.OSL], small[Col.NUM_REQUESTS_SUCCESSFUL]) == (128, 128, 30000)
    # 0.16 `Token Throughput (tokens/sec)` is output tokens/s: 10.6385 req/s x 1024 = 10893.8
    assert big[Col.OUTPUT_TPUT] == pytest.approx(10893.8728)
    # input = 10.6385 req/s x 1024.0 average input tokens = 10893.824; total over 8 GPUs
    assert big[Col.INPUT_TPUT] == pytest.approx(10.6385 * 1024)
    assert big[Col.TPUT_PER_GPU] == pytest.approx((10893.8728 + 10893.824) / 8)
    assert big[Col.DURATION] == pytest.approx(281.9933779)  # Total Latency (ms) 281993.3779
    assert small[Col.OUTPUT_TPUT] == pytest.approx(14389.7989)
    assert small[Col.TPUT_PER_GPU] == pytest.approx((14389.7989 + 112.4203 * 128) / 8)


def test_a_console_log_is_not_invalid_json_and_is_claimed_by_trtllm_bench() -> None:
    src = _src("result_128_128_30000.txt")
    assert src.data.startswith(b"[TensorRT-LLM] TensorRT-LLM version: 0.16.0")
    assert parse_json(src) is None  # a text file, not broken JSON
    assert READER.sniff(src, None)


def test_a_log_that_stopped_before_the_report_is_named() -> None:
    text = _src("result_128_128_30000.txt").data
    cut = text[: text.index(b"= ENGINE DETAILS")]
    with pytest.raises(ParseError) as err:
        READER.read(_src("x.log", cut), None)
    assert err.value.reason.startswith(
        "trtllm-bench 0.16.0 console log: no PERFORMANCE OVERVIEW section"
    )


def test_a_report_without_a_completed_request_is_named() -> None:
    doc = json.loads(_src("in128_out40_bs1.json").text())
    doc["request_info"]["num_requests"] = 0
    with pytest.raises(ParseError) as err:
        READER.read(_src("in128_out40_bs1.json"), doc)
    assert err.value.field == "request_info.num_requests"
    assert err.value.reason.startswith("trtllm-bench 1.2.0 report: 0 requests completed")


# The sample console report NVIDIA publishes for trtllm-bench 0.21 (PyTorch flow, --streaming),
# quoted with the command above it from "LLM Inference Benchmarking: Performance Tuning with
# TensorRT-LLM" (https://developer.nvidia.com/blog/llm-inference-benchmarking-performance-tuning-with-tensorrt-llm/);
# not a repository file, so it stays in this test rather than under fixtures/wild.
NVIDIA_SAMPLE_0_21 = """\
trtllm-bench throughput \\
  --model meta-llama/Llama-3.1-8B-Instruct \\
  --dataset dataset.jsonl \\
   --tp 1 \\
   --backend pytorch \\
   --report_json results.json
   --streaming \\
   --concurrency $CONCURRENCY

===========================================================
= PYTORCH BACKEND
===========================================================
Model:                  meta-llama/Llama-3.1-8B-Instruct
Model Path:             None
TensorRT-LLM Version:   0.21.0rc0
Dtype:                  bfloat16
KV Cache Dtype:         None
Quantization:           None

===========================================================
= REQUEST DETAILS
===========================================================
Number of requests:             100
Number of concurrent requests:  94.6050
Average Input Length (tokens):  128.0000
Average Output Length (tokens): 128.0000
===========================================================
= WORLD + RUNTIME INFORMATION
===========================================================
TP Size:                1
PP Size:                1
EP Size:                None
Max Runtime Batch Size: 3840
Max Runtime Tokens:     7680
Scheduling Policy:      GUARANTEED_NO_EVICT
KV Memory Percentage:   90.00%
Issue Rate (req/sec):   1.0526E+15

===========================================================
= PERFORMANCE OVERVIEW
===========================================================
Request Throughput (req/sec):                     86.5373
Total Output Throughput (tokens/sec):             11076.7700
Total Token Throughput (tokens/sec):              22153.5399
Total Latency (ms):                               1155.5715
Average request latency (ms):                     1093.2284
Per User Output Throughput [w/ ctx] (tps/user):   117.1544
Per GPU Output Throughput (tps/gpu):              11076.7700
Average time-to-first-token [TTFT] (ms):   162.6706
Average time-per-output-token [TPOT] (ms): 7.3272
Per User Output Speed (tps/user):          137.1475

-- Per-Request Time-per-Output-Token [TPOT] Breakdown (ms)

[TPOT] MINIMUM: 6.6450
[TPOT] MAXIMUM: 8.1306
[TPOT] AVERAGE: 7.3272
[TPOT] P50    : 7.6079
[TPOT] P90    : 8.1246
[TPOT] P95    : 8.1289
[TPOT] P99    : 8.1306

-- Per-Request Time-to-First-Token [TTFT] Breakdown (ms)

[TTFT] MINIMUM: 93.9210
[TTFT] MAXIMUM: 232.4339
[TTFT] AVERAGE: 162.6706
[TTFT] P50    : 159.7857
[TTFT] P90    : 220.0530
[TTFT] P95    : 226.9148
[TTFT] P99    : 232.4339

-- Request Latency Breakdown (ms) -----------------------

[Latency] P50    : 1091.7905
[Latency] P90    : 1130.7200
[Latency] P95    : 1133.0074
[Latency] P99    : 1137.6817
[Latency] MINIMUM: 1050.1519
[Latency] MAXIMUM: 1137.6817
[Latency] AVERAGE: 1093.2284
"""


def test_the_0_21_console_layout_with_streaming_breakdowns() -> None:
    src = _src("nvidia_sample.log", NVIDIA_SAMPLE_0_21.encode())
    assert READER.sniff(src, parse_json(src))
    (row,) = READER.read(src, None).points
    assert row[Col.MODEL.value] == "meta-llama/Llama-3.1-8B-Instruct"
    assert (row[Col.TP.value], row[Col.PP.value], row[Col.NUM_GPUS.value]) == (1, 1, 1)
    assert Col.EP.value not in row  # `EP Size: None`
    assert row[Col.PRECISION.value] == "bf16"
    # REQUEST DETAILS (0.17+) holds the count and lengths
    assert (row[Col.NUM_REQUESTS_SUCCESSFUL.value], row[Col.ISL.value]) == (100, 128)
    assert row[Col.OUTPUT_TPUT.value] == pytest.approx(11076.77)
    assert row[Col.INPUT_TPUT.value] == pytest.approx(22153.5399 - 11076.77)
    assert row[Col.MEAN_TTFT.value] == pytest.approx(0.1626706)
    assert row[Col.MEDIAN_TTFT.value] == pytest.approx(0.1597857)  # [TTFT] P50 : 159.7857
    assert row[Col.P99_TTFT.value] == pytest.approx(0.2324339)
    assert row[Col.MEDIAN_TPOT.value] == pytest.approx(0.0076079)  # [TPOT] P50 : 7.6079
    assert row[Col.P99_E2EL.value] == pytest.approx(1.1376817)
    meta = row[Col.METADATA.value]
    assert (meta["harness_version"], meta["backend"]) == ("0.21.0rc0", "Pytorch")
    assert meta["avg_num_concurrent_requests"] == pytest.approx(94.605)
    # `--concurrency $CONCURRENCY` is no number: the load falls back to request_rate inf
    assert row[Col.REQUEST_RATE.value] == math.inf and Col.CONC.value not in row


def test_a_concurrency_on_the_command_line_is_the_load() -> None:
    text = NVIDIA_SAMPLE_0_21.replace("$CONCURRENCY", "128")
    (row,) = READER.read(_src("nvidia_sample.log", text.encode()), None).points
    assert row[Col.CONC.value] == 128 and Col.REQUEST_RATE.value not in row
