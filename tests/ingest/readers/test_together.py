"""together_runner baseline results."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers.together import TogetherRunnerReader
from tests.ingest.readers._support import (
    check_only_contract_errors,
    fixture_files,
    load,
    mutated,
    read_point,
)

TOGETHER = TogetherRunnerReader()
GPTOSS = "inferencex/together_runner_baselines/b200_vllm_gptoss-fp4_1k1k_untuned_conc128.json"
DSR1 = "inferencex/together_runner_baselines/b200_sglang_dsr1-fp4_1k1k_tuned_conc16.json"


def test_vllm_tp4_baseline() -> None:
    row = read_point(TOGETHER, GPTOSS)
    expected = {
        Col.SCHEMA_VARIANT: "together_runner",
        Col.HW: "b200",
        Col.MODEL: "openai/gpt-oss-120b",
        Col.MODEL_PREFIX: "gptoss",  # profile gptoss-fp4 minus its precision
        Col.FRAMEWORK: "vllm",
        Col.PRECISION: "fp4",
        Col.IMAGE: "vllm/vllm-openai:v0.22.0",
        Col.ISL: 1024,
        Col.OSL: 1024,
        Col.CONC: 128,
        Col.TP: 4,
        Col.EP: 1,  # compare.py writes ep 0 when EP_SIZE is unset
        Col.NUM_GPUS: 4,  # tp, not gpu.n_gpus (8 = every GPU sampled on the host)
        Col.RUNNER: "gpu-dp-96sjj-gkwph",
        Col.SERVER_FLAGS: '{"enable_tuning": false}',
        Col.NUM_REQUESTS_SUCCESSFUL: 1277,
        Col.NUM_REQUESTS_TOTAL: 1280,  # --num-prompts 10 * conc
        Col.AVG_POWER_W: None,  # averaged over 8 GPUs of which 4 served: not stored
    }
    assert {k: row[k] for k in expected} == expected
    # tput_per_gpu = total_token_throughput / tp = 49231.90367130921 / 4 = 12307.98
    assert row[Col.TPUT_PER_GPU] == pytest.approx(49231.90367130921 / 4)
    assert row[Col.OUTPUT_TPUT_PER_GPU] == pytest.approx(13227.206881019354 / 4)
    assert row[Col.INPUT_TPUT_PER_GPU] == pytest.approx(
        (49231.90367130921 - 13227.206881019354) / 4
    )
    # median_intvty = 1000 / median_tpot_ms = 1000 / 8.074401689338544 = 123.85
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 8.074401689338544)
    assert row[Col.P99_INTVTY] == pytest.approx(1000 / 32.27795309471813)
    assert row[Col.P99_E2EL] == pytest.approx(8.274160878807306)
    assert row[Col.MEDIAN_ITL] == pytest.approx(0.005086211021989584)
    # 3 of 1280 requests failed
    assert row[Col.ERROR_RATE] == pytest.approx(3 / 1280)
    assert len(row[Col.WARNINGS]) == 2


def test_sglang_tp8_baseline_keeps_power() -> None:
    row = read_point(TOGETHER, DSR1)
    assert (row[Col.FRAMEWORK], row[Col.TP], row[Col.EP], row[Col.NUM_GPUS]) == ("sglang", 8, 8, 8)
    assert row[Col.MODEL_PREFIX] == "dsr1"
    assert row[Col.SERVER_FLAGS] == '{"enable_tuning": true}'
    assert row[Col.AVG_POWER_W] == 429.7  # n_gpus 8 == tp 8
    # 2287.867137633622 tok/s / 8 GPUs
    assert row[Col.TPUT_PER_GPU] == pytest.approx(2287.867137633622 / 8)
    assert row[Col.ERROR_RATE] == 0.0  # 160 of 10 * 16


def test_zero_successful_requests_is_rejected() -> None:
    src, doc = load(DSR1)
    doc["metrics"]["successful_requests"] = 0
    with pytest.raises(ParseError) as info:
        TOGETHER.read(src, doc)
    assert info.value.field == "metrics.successful_requests"


def test_every_together_baseline_ingests() -> None:
    files = fixture_files("inferencex/together_runner_baselines/*.json")
    rows = [read_point(TOGETHER, rel) for rel in files]
    assert len(rows) == 13
    assert {(r[Col.FRAMEWORK], r[Col.TP]) for r in rows} == {("sglang", 8), ("vllm", 4)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_documents_raise_only_contract_errors(data: st.DataObject) -> None:
    for rel in (GPTOSS, DSR1):
        src, doc = load(rel)
        check_only_contract_errors(TOGETHER, src, data.draw(mutated(doc)))
