"""vLLM server logs: `SpecDecoding metrics:` lines aggregated weighted by drafts (formats.md §3.9)."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers.server_log import ServerLogReader, kv_pool_tokens, read_log, spec_from_log
from tests.ingest.readers._support import source
from tests.ingest.readers._unit_support import mutated_text, text_file

LOG = "vllm/inferencex_mtp-fixed-ar-minimax-lcb-v8-20260529-092323/vllm_server.excerpt_specdecoding.log"
READER = ServerLogReader()
PREFIX = "(APIServer pid=114) INFO 05-29 13:31:07 [metrics.py:101] "


def test_real_log_lines_aggregate_weighted_by_drafts() -> None:
    src = source(LOG)
    assert READER.sniff(src, None)
    res = READER.read(src, None)
    e = res.enrich
    # The five lines: Accepted 6 + 14630 + 14165 + 449 + 18137 = 47387 tokens,
    # Drafted 6 + 33033 + 31644 + 1125 + 39738 = 105546 tokens, K = 3 positions -> 35182 drafts.
    assert (e[Col.SPEC_ACCEPTED_TOKENS], e[Col.SPEC_DRAFT_TOKENS], e[Col.SPEC_DRAFTS]) == (
        47387.0,
        105546.0,
        35182.0,
    )
    assert e[Col.AL_MEASURED] == pytest.approx(1 + 47387 / 35182)  # 2.34691
    assert e[Col.DRAFT_ACCEPTANCE_RATE] == pytest.approx(47387 / 105546)  # 0.44897
    # per position: Σ rate_i · Drafted_i / ΣDrafted
    drafted = [6, 33033, 31644, 1125, 39738]
    rates = [
        (1.000, 1.000, 1.000),
        (0.659, 0.413, 0.256),
        (0.662, 0.420, 0.261),
        (0.632, 0.349, 0.216),
        (0.670, 0.430, 0.269),
    ]
    expected = [
        sum(r[j] * d for r, d in zip(rates, drafted, strict=True)) / 105546 for j in range(3)
    ]
    assert e[Col.ACCEPT_RATE_PER_POS] == pytest.approx(expected)
    # the naive mean of the five logged means (4.00, 2.33, 2.34, 2.20, 2.37) would be 2.648
    assert abs(e[Col.AL_MEASURED] - 2.648) > 0.3
    assert e[Col.AL_SOURCE] == "server_log"
    assert res.points == [] and "5 SpecDecoding lines" in res.notes[0]


def test_real_log_non_default_args_give_the_real_acceptance_config() -> None:
    e = READER.read(source(LOG), None).enrich
    assert (e[Col.SPEC_METHOD], e[Col.DRAFT_MODEL], e[Col.NUM_SPEC_TOKENS]) == (
        "eagle3",
        "thoughtworks/MiniMax-M2.5-Eagle3",
        3,
    )
    assert e[Col.SYNTHETIC_ACCEPTANCE] is False  # rejection_sample_method 'standard'
    flags = json.loads(e[Col.SERVER_FLAGS])
    assert flags["tensor-parallel-size"] == 8 and flags["enable-expert-parallel"] is True
    assert flags["model"] == "MiniMaxAI/MiniMax-M2.5"


def test_older_lines_without_per_position_rates_weight_the_means_by_drafted() -> None:
    text = "\n".join(
        [
            PREFIX
            + "SpecDecoding metrics: Draft acceptance rate: 50.0%, Mean acceptance length: 2.00, Accepted: 100 tokens, Drafted: 200 tokens",
            PREFIX
            + "SpecDecoding metrics: Draft acceptance rate: 25.0%, Mean acceptance length: 1.50, Accepted: 150 tokens, Drafted: 600 tokens",
        ]
    )
    row, _ = spec_from_log(text, "old.log")
    assert row[Col.AL_MEASURED] == pytest.approx((2.00 * 200 + 1.50 * 600) / 800)  # 1.625
    assert row[Col.SPEC_DRAFTS] is None and row[Col.DRAFT_ACCEPTANCE_RATE] == pytest.approx(
        250 / 800
    )


def test_kv_pool_sums_distinct_engine_processes() -> None:
    text = "\n".join(
        [
            "(EngineCore_DP0 pid=201) INFO [kv_cache_utils.py:1] GPU KV cache size: 1,000,000 tokens",
            "(EngineCore_DP1 pid=202) INFO [kv_cache_utils.py:1] GPU KV cache size: 900,000 tokens",
            "(EngineCore_DP0 pid=201) INFO [kv_cache_utils.py:1] GPU KV cache size: 1,000,000 tokens",
        ]
    )
    assert kv_pool_tokens(text) == 1_900_000
    assert read_log(text, "k.log")[0] == {Col.KV_CACHE_POOL_TOKENS: 1_900_000}


def test_a_log_without_spec_lines_or_args_stores_nothing() -> None:
    src = text_file(
        "s/server.log", "INFO vLLM API server version 0.21.0\nINFO Started server process\n"
    )
    assert READER.sniff(src, None)
    res = READER.read(src, None)
    assert res.enrich == {} and "nothing to store" in res.notes[0]


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("SpecDecoding metrics: Mean acceptance length: 2.0, Drafted: 10 tokens", "line 2"),
        ("non-default args: {'model': 'm', 'x': open('f')}", "line 2"),
        ("non-default args: {'model': }", "line 2"),
    ],
)
def test_malformed_lines_raise_parse_errors_naming_the_line(line: str, field: str) -> None:
    with pytest.raises(ParseError) as err:
        read_log("INFO start\n" + PREFIX + line + "\n", "bad.log")
    assert err.value.field == field


def test_sniffing_reads_content() -> None:
    assert not READER.sniff(text_file("s/server.log", "plain text\n"), None)
    assert not READER.sniff(text_file("s/x.json", "{}"), {"a": 1})


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_mutated_logs_raise_only_parse_errors(data: st.DataObject) -> None:
    src = text_file("s/server.log", data.draw(mutated_text(source(LOG).text())))
    if READER.sniff(src, None):
        with contextlib.suppress(ParseError):
            READER.read(src, None)
