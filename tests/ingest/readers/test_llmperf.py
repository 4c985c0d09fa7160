"""ray-project llmperf outputs from public repositories (tests/fixtures/wild/llmperf/PROVENANCE.md):
three llmperf-leaderboard summaries (one folder, one concurrency, three endpoints) and a
concurrency sweep with a summary and its individual responses per concurrency. Expected values
are worked out by hand from the files' own numbers."""

from __future__ import annotations

import contextlib
import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.pipeline import ingest_paths
from ingest.readers.base import SourceFile
from ingest.readers.llmperf import LlmperfRunReader, LlmperfSummaryReader
from ingest.store import Store
from tests.ingest.readers._support import FIXTURES, check_only_contract_errors, mutated

WILD = FIXTURES / "wild" / "llmperf"
SWEEP = WILD / "gpt-4.1-nano_20260120_165625"
BOARD = WILD / "llmperf-leaderboard_raw_data_summary"
STEM = "gpt-4-1-nano_550_150"
Points = dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def pts(tmp_path_factory: pytest.TempPathFactory) -> Points:
    st = Store(tmp_path_factory.mktemp("llmperf") / "store")
    rep = ingest_paths([WILD], st, run_id="wild")
    assert [r.path for r in rep.rejected] == []
    assert rep.accepted == 9  # 6 sweep concurrencies + 3 leaderboard summaries
    rows = st.points(["wild"]).iter_rows(named=True)
    return {r[Col.SOURCE_PATH]: r for r in rows}


def _tpots(conc: int) -> list[float]:
    """(E2E - TTFT) / (output tokens - 1) of each successful request, straight from the file."""
    recs = json.loads((SWEEP / str(conc) / f"{STEM}_individual_responses.json").read_text())
    return [
        (r["end_to_end_latency_s"] - r["ttft_s"]) / (r["number_output_tokens"] - 1)
        for r in recs
        if r["error_code"] is None
    ]


def test_the_sweep_is_one_point_per_concurrency(pts: Points) -> None:
    sweep = {k: v for k, v in pts.items() if k.startswith(SWEEP.name)}
    # num_concurrent_requests of each summary (also the directory names)
    assert sorted(p[Col.CONC] for p in sweep.values()) == [1, 10, 20, 30, 40, 50]
    for key, p in sweep.items():
        assert key.endswith(f"{STEM}_summary.json")  # the summary names the point's source
        assert p[Col.MODEL] == "gpt-4.1-nano" and p[Col.SCHEMA_VARIANT] == "llmperf"
        assert (p[Col.ISL], p[Col.OSL]) == (550, 150)  # mean_input_tokens, mean_output_tokens
        meta = json.loads(p[Col.METADATA])
        assert (meta["tool"], meta["tool_version"]) == ("llmperf", "2023-08-31")
        assert meta["individual_responses"] == f"{STEM}_individual_responses.json"


def test_two_sweep_points_by_hand(pts: Points) -> None:
    c1 = pts[f"{SWEEP.name}/1/{STEM}_summary.json"]
    c10 = pts[f"{SWEEP.name}/10/{STEM}_summary.json"]
    # results_mean_output_throughput_token_per_s
    assert (c1[Col.OUTPUT_TPUT], c10[Col.OUTPUT_TPUT]) == (72.12489131884479, 242.96232158449254)
    # results_ttft_s_quantiles_p50, already seconds
    assert (c1[Col.MEDIAN_TTFT], c10[Col.MEDIAN_TTFT]) == (0.6660815749928588, 1.030747970493394)
    assert c10[Col.P99_TTFT] == 1.142347570618731
    # TPOT from the individual responses: the median of 10 per-request values is the mean of
    # the 5th and 6th: (0.008518455153814731 + 0.00859490489589613) / 2 at conc 1
    assert c1[Col.MEDIAN_TPOT] == pytest.approx((0.008518455153814731 + 0.00859490489589613) / 2)
    assert c10[Col.MEDIAN_TPOT] == pytest.approx(statistics.median(_tpots(10)))
    assert c10[Col.MEAN_TPOT] == pytest.approx(statistics.fmean(_tpots(10)))
    assert c10[Col.MEDIAN_INTVTY] == pytest.approx(1 / statistics.median(_tpots(10)))  # 127.1
    # results_request_output_throughput_token_per_s_quantiles_p50: E2E-normalised interactivity
    assert c1[Col.MEDIAN_E2E_NORM_INTVTY] == 76.76272752890614
    # results_num_completed_requests_per_min 85.20011277071626 -> 1.42 req/s; input tokens/s is
    # results_number_input_tokens_mean 581.0 x that rate
    assert c10[Col.REQUEST_THROUGHPUT] == pytest.approx(85.20011277071626 / 60)
    assert c10[Col.INPUT_TPUT] == pytest.approx(581.0 * 85.20011277071626 / 60)
    assert c10[Col.TOTAL_TPUT] == pytest.approx(581.0 * 85.20011277071626 / 60 + 242.96232158449254)
    assert (c10[Col.NUM_REQUESTS_SUCCESSFUL], c10[Col.NUM_REQUESTS_TOTAL]) == (10, 10)


def test_leaderboard_summaries_without_individual_responses(pts: Points) -> None:
    board = {Path(k).name: v for k, v in pts.items() if k.startswith(BOARD.name)}
    assert sorted(board) == ["fireworks_70b.json", "groq_70b.json", "together_70b.json"]
    groq = board["groq_70b.json"]
    assert (groq[Col.MODEL], groq[Col.CONC]) == ("llama2-70b-4096", 5)
    assert groq[Col.OUTPUT_TPUT] == 441.84737788500206
    assert groq[Col.MEDIAN_TTFT] == 0.2218883791938424
    assert groq[Col.MEDIAN_E2E_NORM_INTVTY] == 185.05116911192525
    assert groq[Col.INPUT_TPUT] == pytest.approx(550.0 * 176.73895115400083 / 60)
    # no individual responses beside them: no TPOT (llmperf's own ITL includes the TTFT)
    assert groq[Col.MEDIAN_TPOT] is None and groq[Col.MEDIAN_INTVTY] is None
    meta = json.loads(groq[Col.METADATA])
    assert meta["llmperf_inter_token_latency_s_median"] > 0
    together = board["together_70b.json"]
    assert together[Col.MODEL] == "together_ai/togethercomputer/llama-2-70b-chat"
    assert together[Col.OUTPUT_TPUT] == 216.45553311958628
    assert together[Col.MEDIAN_TTFT] == 0.6352748079999628


def _summary(conc: int = 10) -> tuple[SourceFile, dict[str, Any]]:
    path = SWEEP / str(conc) / f"{STEM}_summary.json"
    return SourceFile(path, f"s/{path.name}", "s", path.read_bytes()), json.loads(path.read_text())


def test_a_summary_of_a_run_where_every_request_failed_is_refused_naming_the_tool() -> None:
    src, doc = _summary()
    doc.update(
        results_num_completed_requests=0,
        results_number_errors=10,
        results_error_code_frequency="{429: 10}",
    )
    reader = LlmperfSummaryReader()
    assert reader.sniff(src, doc)
    with pytest.raises(
        ParseError,
        match=r"llmperf summary: no request completed \(10 started; error codes \{429: 10\}\)",
    ):
        reader.read(src, doc)


def test_individual_responses_alone_are_named_not_refused() -> None:
    path = SWEEP / "10" / f"{STEM}_individual_responses.json"
    src = SourceFile(path, path.name, "x", path.read_bytes())
    doc = json.loads(path.read_text())
    reader = LlmperfSummaryReader()
    assert reader.sniff(src, doc) and not LlmperfRunReader().sniff_unit([src])
    res = reader.read(src, doc)
    assert res.points == [] and "without their *_summary.json" in res.notes[0]


def test_the_run_reader_pairs_a_summary_with_its_own_responses_only() -> None:
    src, _ = _summary(10)
    other = SWEEP / "20" / f"{STEM}_individual_responses.json"
    renamed = SourceFile(other, "s/other_individual_responses.json", "s", other.read_bytes())
    reader = LlmperfRunReader()
    # one summary and one responses file in a directory pair even under other names
    assert reader.sniff_unit([src, renamed])
    # a summary alone is left to the file reader
    assert not reader.sniff_unit([src])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_outputs_raise_only_contract_errors(data: st.DataObject) -> None:
    src, doc = _summary(10)
    check_only_contract_errors(LlmperfSummaryReader(), src, data.draw(mutated(doc)))
    path = SWEEP / "10" / f"{STEM}_individual_responses.json"
    records = data.draw(mutated(json.loads(path.read_text())))
    pair = [src, SourceFile(path, f"s/{path.name}", "s", json.dumps(records).encode())]
    reader = LlmperfRunReader()
    if reader.sniff_unit(pair):
        with contextlib.suppress(ParseError):
            reader.read_unit(pair)


def test_several_runs_in_one_directory_pair_by_name() -> None:
    # The sweep's conc 10 and 20 runs renamed into one directory (llmperf names files by model
    # and lengths only, so a user sweeping into one folder renames them like this)
    files = []
    for conc in (20, 10):
        for kind in ("summary", "individual_responses"):
            path = SWEEP / str(conc) / f"{STEM}_{kind}.json"
            rel = f"d/c{conc}_{kind}.json"
            files.append(SourceFile(WILD / rel, rel, "d", path.read_bytes()))
    res = LlmperfRunReader().read_unit(files)
    assert [p[Col.CONC] for p in res.points] == [10, 20]
    assert res.points[0][Col.MEDIAN_TPOT] == pytest.approx(statistics.median(_tpots(10)))
    assert res.points[1][Col.MEDIAN_TPOT] == pytest.approx(statistics.median(_tpots(20)))
    assert [p[Col.METADATA]["summary"] for p in res.points] == [
        "c10_summary.json",
        "c20_summary.json",
    ]
    assert sorted(res.consumed) == sorted(f.rel for f in files)
