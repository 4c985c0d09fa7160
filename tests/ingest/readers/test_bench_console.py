"""`Serving Benchmark Result` console blocks when only a log holds them
(tests/fixtures/wild/bench_console, PROVENANCE.md there): SGLang `bench_serving` blocks from the
SGLang project's cookbook and a vLLM `benchmark_serving.py` request-rate sweep captured in a
README, read end to end through the pipeline by `ingest/readers/vllm_capture.py`. Every expected
value is read by hand off the block (ms become s)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.readers._bench_console import parse_console
from ingest.store import Store

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "bench_console"
GLM = WILD / "sglang_cookbook_glm-4.7-flash"
QWEN = WILD / "sglang_cookbook_qwen3"
VLLM = WILD / "vllm_llmd_rate_sweep"


def _points(tmp_path: Path, root: Path, count: int) -> list[dict[str, Any]]:
    st = Store(tmp_path / "store")
    rep = ingest_paths([root], st, run_id="console")
    assert [r.path for r in rep.rejected if not r.path.endswith("PROVENANCE.md")] == []
    rows = list(st.points(["console"]).iter_rows(named=True))
    assert len(rows) == count
    return rows


def _at(rows: list[dict[str, Any]], conc: int, isl: int, osl: int) -> dict[str, Any]:
    (row,) = [r for r in rows if (r[Col.CONC], r[Col.ISL], r[Col.OSL]) == (conc, isl, osl)]
    return row


def test_sglang_cookbook_blocks_with_their_command_lines(tmp_path: Path) -> None:
    rows = _points(tmp_path, GLM, 9)
    # nine commands: 1000/1000 at conc 1, 16, 100; 1000/8000 and 8000/1000 at conc 1, 16, 64
    assert sorted((r[Col.ISL], r[Col.OSL], r[Col.CONC]) for r in rows) == [
        (1000, 1000, 1),
        (1000, 1000, 16),
        (1000, 1000, 100),
        (1000, 8000, 1),
        (1000, 8000, 16),
        (1000, 8000, 64),
        (8000, 1000, 1),
        (8000, 1000, 16),
        (8000, 1000, 64),
    ]
    for r in rows:
        assert r[Col.SCHEMA_VARIANT] == "sglang_bench_console"
        assert (r[Col.MODEL], r[Col.FRAMEWORK]) == ("zai-org/GLM-4.7-Flash", "sglang")
        assert r[Col.REQUEST_RATE] is None  # `--request-rate inf` under a concurrency limit
        meta = json.loads(r[Col.METADATA])
        assert (meta["harness"], meta["backend"]) == ("sglang.bench_serving", "sglang")
        # no --random-range-ratio: SGLang drew each length from [0, len]
        assert any("requested maxima" in w for w in r[Col.WARNINGS])
    low = _at(rows, 1, 1000, 1000)
    assert low[Col.NUM_REQUESTS_SUCCESSFUL] == 10
    assert low[Col.OUTPUT_TPUT] == pytest.approx(108.37)
    assert low[Col.INPUT_TPUT] == pytest.approx(156.67)  # printed, not total - output
    assert low[Col.TOTAL_TPUT] == pytest.approx(265.03)
    assert low[Col.MEDIAN_TTFT] == pytest.approx(0.09455)  # Median TTFT (ms): 94.55
    assert low[Col.MEDIAN_TPOT] == pytest.approx(0.00882)  # Median TPOT (ms): 8.82
    assert low[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 8.82)
    assert low[Col.P90_E2EL] == pytest.approx(7.17225)  # P90 E2E Latency (ms): 7172.25
    assert json.loads(low[Col.METADATA])["measured_concurrency"] == 1.0
    high = _at(rows, 64, 8000, 1000)
    assert high[Col.NUM_REQUESTS_SUCCESSFUL] == 320
    assert high[Col.OUTPUT_TPUT] == pytest.approx(1017.93)
    assert high[Col.MEDIAN_TTFT] == pytest.approx(0.44169)
    assert high[Col.P99_TTFT] == pytest.approx(1.23268)
    assert high[Col.MEDIAN_TPOT] == pytest.approx(0.06279)
    assert high[Col.MEAN_INPUT_LEN] == pytest.approx(1273893 / 320)


def test_a_second_sglang_cookbook_page(tmp_path: Path) -> None:
    rows = _points(tmp_path, QWEN, 9)
    assert {r[Col.MODEL] for r in rows} == {"Qwen/Qwen3-235B-A22B-Instruct-2507"}
    mid = _at(rows, 16, 1000, 1000)
    assert mid[Col.OUTPUT_TPUT] == pytest.approx(832.04)
    assert mid[Col.MEDIAN_TTFT] == pytest.approx(0.08882)
    assert mid[Col.MEDIAN_TPOT] == pytest.approx(0.01612)


def test_vllm_request_rate_sweep_in_a_captured_log(tmp_path: Path) -> None:
    rows = {r[Col.REQUEST_RATE]: r for r in _points(tmp_path, VLLM, 3)}
    # Namespace(max_concurrency=None, request_rate=10.0 | 30.0 | inf): request-rate points
    assert set(rows) == {10.0, 30.0, math.inf}
    for r in rows.values():
        assert r[Col.CONC] is None
        assert r[Col.SCHEMA_VARIANT] == "vllm_capture"
        assert r[Col.MODEL] == "meta-llama/Llama-3.2-3B-Instruct"
        assert (r[Col.ISL], r[Col.OSL]) == (1000, 500)  # random_input_len, random_output_len
        assert json.loads(r[Col.METADATA])["harness"] == "vllm bench serve"
    r10, inf = rows[10.0], rows[math.inf]
    assert r10[Col.NUM_REQUESTS_SUCCESSFUL] == 300
    assert r10[Col.OUTPUT_TPUT] == pytest.approx(2249.25)
    # `Total Token throughput` (vLLM <= 0.8 casing) - output = input
    assert r10[Col.INPUT_TPUT] == pytest.approx(10566.33 - 2249.25)
    assert r10[Col.MEDIAN_TTFT] == pytest.approx(0.053)
    assert r10[Col.MEDIAN_TPOT] == pytest.approx(0.01351)
    assert inf[Col.OUTPUT_TPUT] == pytest.approx(11481.02)
    assert inf[Col.MEDIAN_TTFT] == pytest.approx(0.87708)
    assert inf[Col.MEDIAN_TPOT] == pytest.approx(0.04374)


def test_text_valued_lines_are_kept_as_words() -> None:
    text = (
        "============ Serving Benchmark Result ============\n"
        "Backend:                                 sglang-oai\n"
        "Traffic request rate:                    inf\n"
        "Max request concurrency:                 not set\n"
        "Successful requests:                     100\n"
        "==================================================\n"
    )
    (block,) = parse_console(text, "x.log")
    assert block.texts == {
        "Backend": "sglang-oai",
        "Traffic request rate": "inf",
        "Max request concurrency": "not set",
    }
    assert block.values == {"Successful requests": 100.0} and block.sglang


def test_the_load_printed_above_a_block_is_read_without_a_namespace() -> None:
    # vLLM's benchmark_serving.py (to mid 2025) prints `Traffic request rate: 10.0` and
    # `Maximum request concurrency: None` above the block; drop the Namespace and command lines.
    text = "\n".join(
        line
        for line in (VLLM / "README.md").read_text().splitlines()
        if "Namespace(" not in line and "benchmark_serving.py" not in line
    )
    blocks = parse_console(text, "README.md")
    assert [b.args.get("request_rate") for b in blocks] == ["10.0", "30.0", "inf"]
    assert [b.args.get("max_concurrency") for b in blocks] == ["None", "None", "None"]
