"""GenAI-Perf `*_genai_perf.json` exports, both `input_config` generations, end to end.

No GenAI-Perf export committed to a public repository was found in the stored index (see
docs/formats.d/genai_perf.md), so these documents are CONSTRUCTED from the exporter source of
triton-inference-server/perf_analyzer (genai-perf/genai_perf/export_data/json_exporter.py and
metrics/statistics.py at c18c493e for the ns-era export, 263c5f6e for 0.0.16): same keys, units
and nesting, made-up numbers. Replace them with real files under tests/fixtures/wild/genai_perf.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.readers.aiperf import AiperfTreeReader
from ingest.readers.base import SourceFile
from ingest.readers.genai_perf import GenaiPerfReader
from ingest.store import Store


def _lat(unit: str, avg: float, p50: float, p90: float, p99: float) -> dict[str, Any]:
    return {"unit": unit, "avg": avg, "p50": p50, "p90": p90, "p99": p99, "min": p50, "max": p99}


# 0.0.13+ shape: config object, ms latencies, request_count, per-user throughput, a rate stimulus.
NEW: dict[str, Any] = {
    "request_throughput": {"unit": "requests/sec", "avg": 2.5},
    "request_latency": _lat("ms", 4000.0, 3900.0, 4500.0, 5000.0),
    "request_count": {"unit": "count", "avg": 250},
    "time_to_first_token": _lat("ms", 120.0, 110.0, 180.0, 250.0),
    "time_to_second_token": _lat("ms", 20.0, 19.0, 25.0, 30.0),
    "inter_token_latency": _lat("ms", 15.0, 14.0, 17.0, 20.0),
    "output_token_throughput_per_user": _lat("tokens/sec/user", 66.0, 71.4, 80.0, 85.0),
    "output_sequence_length": {"unit": "tokens", "avg": 256.0, "p50": 256.0},
    "input_sequence_length": {"unit": "tokens", "avg": 1024.0, "p50": 1024.0},
    "output_token_throughput": {"unit": "tokens/sec", "avg": 640.0},
    "gpu_power_usage": {"unit": "W", "gpu0": {"avg": 300.0, "p50": 301.0}},
    "input_config": {
        "model_names": ["meta-llama/Llama-3.1-8B-Instruct"],
        "endpoint": {"type": "chat", "service_kind": "openai", "streaming": True},
        "perf_analyzer": {"stimulus": {"request_rate": 2.5}},
        "input": {
            "prompt_source": "synthetic",
            "synthetic_tokens": {"mean": 1024, "stddev": 0},
            "output_tokens": {"mean": 256, "stddev": 0},
        },
    },
}
# The first export (May 2024): argparse namespace, ns latencies, num_*_token lengths.
OLD: dict[str, Any] = {
    "request_throughput": {"unit": "requests/sec", "avg": 1.0},
    "request_latency": _lat("ns", 2.0e9, 1.9e9, 2.2e9, 2.5e9),
    "time_to_first_token": _lat("ns", 5.0e7, 4.0e7, 8.0e7, 9.0e7),
    "inter_token_latency": _lat("ns", 1.0e7, 1.25e7, 1.4e7, 1.6e7),
    "output_token_throughput": {"unit": "tokens/sec", "avg": 200.0},
    "output_token_throughput_per_request": _lat("tokens/sec", 100.0, 99.0, 110.0, 120.0),
    "num_output_token": {"unit": "tokens", "avg": 200.0, "p50": 200.0},
    "num_input_token": {"unit": "tokens", "avg": 550.0, "p50": 550.0},
    "input_config": {
        "model": ["gpt2"],
        "backend": "tensorrtllm",
        "service_kind": "triton",
        "endpoint_type": None,
        "concurrency": 4,
        "request_rate": None,
        "synthetic_input_tokens_mean": 550,
        "output_tokens_mean": -1,
        "input_dataset": None,
        "input_file": None,
        "streaming": True,
    },
}


def _ingest(tmp_path: Path, docs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    root = tmp_path / "runs"
    for name, doc in docs.items():
        (root / name).mkdir(parents=True)
        (root / name / "profile_export_genai_perf.json").write_text(json.dumps(doc, indent=2))
        (root / name / "profile_export_genai_perf.csv").write_text("Metric,avg,min,max\n")
    st = Store(tmp_path / "store")
    rep = ingest_paths([root], st, run_id="g")
    assert rep.rejected == [] and rep.accepted == len(docs)
    rows = st.points(["g"]).iter_rows(named=True)
    return {Path(r[Col.SOURCE_PATH]).parent.name: r for r in rows}


def test_both_generations_end_to_end(tmp_path: Path) -> None:
    pts = _ingest(
        tmp_path,
        {"llama-openai-chat-request_rate2.5": NEW, "gpt2-triton-tensorrtllm-concurrency4": OLD},
    )
    new, old = pts["llama-openai-chat-request_rate2.5"], pts["gpt2-triton-tensorrtllm-concurrency4"]
    assert (new[Col.CONC], new[Col.REQUEST_RATE]) == (None, 2.5)  # stimulus.request_rate
    assert (old[Col.CONC], old[Col.REQUEST_RATE]) == (4, None)  # input_config.concurrency
    assert (new[Col.MODEL], old[Col.MODEL]) == ("meta-llama/Llama-3.1-8B-Instruct", "gpt2")
    # output tput as written; input = request_throughput x mean ISL = 2.5 x 1024 = 2560 tok/s,
    # total = 2560 + 640 = 3200; old: 1.0 x 550 + 200 = 750
    assert (new[Col.OUTPUT_TPUT], new[Col.INPUT_TPUT], new[Col.TOTAL_TPUT]) == (640, 2560, 3200)
    assert (old[Col.OUTPUT_TPUT], old[Col.TOTAL_TPUT]) == (200.0, 750.0)
    # TTFT p50: 110 ms -> 0.110 s; 4.0e7 ns -> 0.040 s
    assert new[Col.MEDIAN_TTFT] == pytest.approx(0.110)
    assert old[Col.MEDIAN_TTFT] == pytest.approx(0.040)
    # ITL p50 is the TPOT; interactivity 1 / 0.014 s = 71.43 and 1 / 0.0125 s = 80
    assert new[Col.MEDIAN_TPOT] == pytest.approx(0.014)
    assert new[Col.MEDIAN_INTVTY] == pytest.approx(1 / 0.014)
    assert old[Col.MEDIAN_INTVTY] == pytest.approx(80.0)
    # request_count.avg = 250 (0.0.10+); the ns-era export has no count
    assert new[Col.NUM_REQUESTS_SUCCESSFUL] == 250 and old[Col.NUM_REQUESTS_SUCCESSFUL] is None
    # nominal lengths only where synthetic and set: output_tokens_mean -1 means "not set"
    assert (new[Col.ISL], new[Col.OSL], old[Col.ISL], old[Col.OSL]) == (1024, 256, 550, None)
    assert old[Col.MEAN_OUTPUT_LEN] == 200.0  # num_output_token read as output_sequence_length
    assert new[Col.SCHEMA_VARIANT] == old[Col.SCHEMA_VARIANT] == "genai_perf"
    meta = json.loads(new[Col.METADATA])
    assert meta["stimulus"] == {"request_rate": 2.5} and meta["service_kind"] == "openai"
    assert meta["output_token_throughput_per_user_avg"] == 66.0
    assert json.loads(old[Col.METADATA])["backend"] == "tensorrtllm"


def test_aiperf_leaves_genai_perf_directories_alone() -> None:
    files = [
        SourceFile(Path(n), f"run/{n}", "run", d)
        for n, d in (
            ("profile_export_genai_perf.json", json.dumps(NEW).encode()),
            ("profile_export_genai_perf.csv", b"Metric,avg,min,max,p99\n"),
        )
    ]
    assert not AiperfTreeReader().sniff_unit(files)
    res = GenaiPerfReader().read_unit(files)
    assert res.consumed == [
        "run/profile_export_genai_perf.json",
        "run/profile_export_genai_perf.csv",
    ]


def test_a_bad_stimulus_names_its_field(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(NEW))
    doc["input_config"]["perf_analyzer"]["stimulus"] = {"request_rate": 0}
    root = tmp_path / "r" / "x"
    root.mkdir(parents=True)
    (root / "profile_export_genai_perf.json").write_text(json.dumps(doc))
    rep = ingest_paths([root.parent], Store(tmp_path / "s"), run_id="g")
    assert [r.field for r in rep.rejected] == ["input_config.perf_analyzer.stimulus.request_rate"]
