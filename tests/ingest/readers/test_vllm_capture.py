"""A hand-captured vLLM run directory: console result blocks become points with their AL, and the
/metrics scrape, server log and synthetic-rates file are cross-checked against them."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError, SchemaError
from ingest.readers._bench_console import block_row, parse_console
from ingest.readers.vllm_capture import VllmCaptureReader
from tests.ingest.readers._support import norm, source
from tests.ingest.readers._unit_support import mutated_text, text_file, unit

CAPTURE = "vllm/inferencex_mtp-fixed-ar-minimax-lcb-v8-20260529-092323"
READER = VllmCaptureReader()


def _points() -> tuple[dict[int, dict[str, object]], list[str], list[str]]:
    files = unit(CAPTURE)
    assert READER.sniff_unit(files)
    res = READER.read_unit(files)
    assert res.rejects == []
    return {p[Col.CONC]: norm(files[0], p) for p in res.points}, res.notes, res.consumed


def test_each_concurrency_is_one_point_with_its_console_counters() -> None:
    points, _, _ = _points()
    assert sorted(points) == [32, 64]  # the combined log repeats both per-conc logs: read once
    c32, c64 = points[32], points[64]
    # conc 32: Drafts 21936, Draft tokens 65808, Accepted 29250 -> AL = 1 + 29250/21936 = 2.33342
    assert (c32[Col.SPEC_DRAFTS], c32[Col.SPEC_DRAFT_TOKENS], c32[Col.SPEC_ACCEPTED_TOKENS]) == (
        21936.0,
        65808.0,
        29250.0,
    )
    assert c32[Col.AL_MEASURED] == pytest.approx(1 + 29250 / 21936)
    assert c32[Col.DRAFT_ACCEPTANCE_RATE] == pytest.approx(29250 / 65808)  # printed 44.45 %
    assert c32[Col.ACCEPT_RATE_PER_POS] == pytest.approx([0.6601, 0.4153, 0.2581])
    # conc 64: 1 + 29445/21744 = 2.35417
    assert c64[Col.AL_MEASURED] == pytest.approx(1 + 29445 / 21744)
    assert c64[Col.AL_SOURCE] == "bench_console"


def test_points_carry_the_servers_real_acceptance_config_and_throughput() -> None:
    points, _, _ = _points()
    c32 = points[32]
    assert (c32[Col.MODEL], c32[Col.TP], c32[Col.EP], c32[Col.NUM_GPUS]) == (
        "MiniMaxAI/MiniMax-M2.5",
        8,
        8,
        8,
    )
    assert (c32[Col.SPEC_METHOD], c32[Col.DRAFT_MODEL], c32[Col.NUM_SPEC_TOKENS]) == (
        "eagle3",
        "thoughtworks/MiniMax-M2.5-Eagle3",
        3,
    )
    # the server ran rejection_sample_method 'standard': real acceptance, though the directory's
    # synthetic_acceptance_rates.json pins rates for a later run
    assert c32[Col.SYNTHETIC_ACCEPTANCE] is False and c32[Col.SYNTHETIC_AL] is None
    assert c32[Col.TPUT_PER_GPU] == pytest.approx(5317.03 / 8)
    assert c32[Col.INPUT_TPUT] == pytest.approx(5317.03 - 1818.47)
    assert c32[Col.MEDIAN_TPOT] == pytest.approx(0.0122) and c32[
        Col.MEDIAN_INTVTY
    ] == pytest.approx(1000 / 12.20)
    assert c32[Col.P99_TTFT] == pytest.approx(7.00283)
    assert (c32[Col.NUM_REQUESTS_TOTAL], c32[Col.ERROR_RATE], c32[Col.MEAN_INPUT_LEN]) == (
        200,
        0.0,
        98504 / 200,
    )
    assert c32[Col.SCHEMA_VARIANT] == "vllm_capture" and c32[Col.HW] is None
    assert "hardware is not recorded in the capture" in c32[Col.WARNINGS]


def test_cross_checks_against_the_scrape_the_log_and_the_synthetic_rates() -> None:
    _, notes, consumed = _points()
    text = "\n".join(notes)
    # /metrics counters (43680 drafts, 58695 accepted) = conc 32 + conc 64 console blocks
    assert "(43680.0, 58695.0)" in text and "consistent" in text and "snapshot AL 2.34375" in text
    assert "synthetic_acceptance_rates [0.664606, 0.419918, 0.259226] match" in text
    assert f"server-log AL {1 + 47387 / 35182}" in text
    assert len(consumed) == 8 and consumed[0].endswith(".log") and "vllm_bench_serve" in consumed[0]


def test_a_single_concurrency_log_is_one_point() -> None:
    files = [f for f in unit(CAPTURE) if f.name == "vllm_bench_serve_conc64.log"]
    res = READER.read_unit(files)
    assert [p[Col.CONC] for p in res.points] == [64]
    assert (
        res.points[0][Col.FRAMEWORK] == "vllm"
        and res.points[0][Col.MODEL] == "MiniMaxAI/MiniMax-M2.5"
    )
    assert "server config unknown" in res.notes[0]


def test_a_conflicting_second_result_for_one_concurrency_is_rejected() -> None:
    text = source(f"{CAPTURE}/vllm_bench_serve_conc64.log").text()
    files = [text_file("c/a.log", text), text_file("c/b.log", text.replace("13.49", "14.00"))]
    res = READER.read_unit(files)
    assert len(res.points) == 1 and len(res.rejects) == 1
    assert "concurrency 64" in res.rejects[0].reason and res.rejects[0].row.startswith(
        "c/b.log line "
    )


def test_a_printed_al_that_disagrees_with_the_counters_is_a_warning() -> None:
    text = (
        source(f"{CAPTURE}/vllm_bench_serve_conc32.log")
        .text()
        .replace(
            "Acceptance length:                       2.33",
            "Acceptance length:                       2.90",
        )
    )
    row = block_row(parse_console(text, "c.log")[0])
    assert row[Col.WARNINGS] == ["printed acceptance length 2.9 != 1 + accepted/drafts = 2.3334"]


def test_a_block_without_concurrency_is_refused() -> None:
    # without a concurrency and without a request rate (either would be the load)
    text = "\n".join(
        line
        for line in source(f"{CAPTURE}/vllm_bench_serve_conc32.log").text().splitlines()
        if "concurrency" not in line and "request rate" not in line and "request_rate" not in line
    )
    with pytest.raises(ParseError, match="Maximum request concurrency"):
        block_row(parse_console(text, "c.log")[0])


def test_a_random_dataset_block_has_nominal_lengths() -> None:
    text = (
        source(f"{CAPTURE}/vllm_bench_serve_conc32.log")
        .text()
        .replace("dataset_name='custom'", "dataset_name='random'")
    )
    row = block_row(parse_console(text, "c.log")[0])
    assert (row[Col.ISL], row[Col.OSL]) == (1024, 128)  # random_input_len / random_output_len


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_mutated_console_logs_raise_only_contract_errors(data: st.DataObject) -> None:
    text = data.draw(mutated_text(source(f"{CAPTURE}/vllm_bench_serve.log").text()))
    files = [
        text_file("c/bench.log", text),
        *[f for f in unit(CAPTURE) if f.name.startswith(("vllm_server", "livecodebench"))],
    ]
    if not READER.sniff_unit(files):
        return
    try:
        res = READER.read_unit(files)
    except ParseError:
        return
    for point in res.points:
        with contextlib.suppress(SchemaError):
            norm(files[0], point)
