"""vLLM `/metrics` Prometheus text: one snapshot -> totals, a before/after pair -> deltas."""

from __future__ import annotations

import contextlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers.prometheus import (
    PrometheusPairReader,
    PrometheusSnapshotReader,
    delta_row,
    snapshot_row,
)
from tests.ingest.readers._support import source
from tests.ingest.readers._unit_support import mutated_text, text_file

SCRAPE = "vllm/inferencex_mtp-fixed-ar-minimax-lcb-v8-20260529-092323/livecodebench_metrics.txt"
SNAPSHOT, PAIR = PrometheusSnapshotReader(), PrometheusPairReader()


def _with(text: str, values: dict[str, float]) -> str:
    """The scrape with some counter samples set to other values (keys: name{..labels..} prefix)."""
    for prefix, value in values.items():
        text, n = re.subn(rf"(?m)^({re.escape(prefix)}\S*) \S+$", rf"\g<1> {value}", text)
        assert n == 1, prefix
    return text


def before_text() -> str:
    """The same server after its first benchmark (conc 32) only: the console's conc-32 counters."""
    name = 'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="MiniMaxAI/MiniMax-M2.5",position="'
    return _with(
        source(SCRAPE).text(),
        {
            "vllm:spec_decode_num_drafts_total{": 21936.0,
            "vllm:spec_decode_num_draft_tokens_total{": 65808.0,
            "vllm:spec_decode_num_accepted_tokens_total{": 29250.0,
            f'{name}0"': 14480.0,
            f'{name}1"': 9110.0,
            f'{name}2"': 5660.0,
            "process_cpu_seconds_total": 20.0,
        },
    )


def test_real_snapshot_gives_al_from_counters_since_start() -> None:
    src = source(SCRAPE)
    assert SNAPSHOT.sniff(src, None)
    res = SNAPSHOT.read(src, None)
    e = res.enrich
    # drafts 43680, draft tokens 131040, accepted 58695 (both benchmark runs and warmup)
    assert (e[Col.SPEC_DRAFTS], e[Col.SPEC_DRAFT_TOKENS], e[Col.SPEC_ACCEPTED_TOKENS]) == (
        43680.0,
        131040.0,
        58695.0,
    )
    assert e[Col.AL_MEASURED] == 1 + 58695 / 43680 == 2.34375
    assert e[Col.DRAFT_ACCEPTANCE_RATE] == 58695 / 131040
    # per_pos counters 29030, 18342, 11323 over 43680 drafts; they sum to the accepted total
    assert e[Col.ACCEPT_RATE_PER_POS] == [29030 / 43680, 18342 / 43680, 11323 / 43680]
    assert [round(r, 6) for r in e[Col.ACCEPT_RATE_PER_POS]] == [0.664606, 0.419918, 0.259226]
    assert e[Col.AL_SOURCE] == "prometheus_snapshot"
    # prefix caching disabled: 0 queries -> no hit rate; prompt tokens all local_compute (197008)
    assert e[Col.GPU_PREFIX_CACHE_HIT_RATE] == 0.0 and e[Col.NUM_PREEMPTIONS] == 0.0
    assert Col.PEAK_GPU_KV_USAGE not in e  # a scrape is one instant, not the run's peak
    assert res.points == [] and res.consumed == [SCRAPE]


def test_hit_rates_keep_inferencex_names_for_inferencex_definitions() -> None:
    real = SNAPSHOT.read(source(SCRAPE), None)
    # 0 hits / 0 queries: no hits-per-query rate; by source all 197008 prompt tokens are
    # local_compute, so InferenceX's gpu_cache_hit_rate is local_cache_hit 0 / 197008 = 0.0
    assert Col.PREFIX_CACHE_HIT_RATE not in real.enrich
    assert real.enrich[Col.GPU_PREFIX_CACHE_HIT_RATE] == 0.0
    assert real.scope["models"] == ["MiniMaxAI/MiniMax-M2.5"] and real.scope["since_start"]
    # The same scrape with cache hits, and a vLLM V0 hit-rate gauge beside the counters.
    gauge = (
        "# HELP vllm:gpu_prefix_cache_hit_rate GPU prefix cache block hit rate.\n"
        "# TYPE vllm:gpu_prefix_cache_hit_rate gauge\n"
        'vllm:gpu_prefix_cache_hit_rate{model_name="MiniMaxAI/MiniMax-M2.5"} 0.42\n'
    )
    text = gauge + _with(
        source(SCRAPE).text(),
        {"vllm:prefix_cache_hits_total{": 150000.0, "vllm:prefix_cache_queries_total{": 197008.0},
    )
    e = SNAPSHOT.read(text_file("x/metrics.txt", text), None).enrich
    # hits / queries = 150000 / 197008 = 0.761390
    assert e[Col.PREFIX_CACHE_HIT_RATE] == 150000 / 197008
    assert round(e[Col.PREFIX_CACHE_HIT_RATE], 6) == 0.76139
    # the gauge is vLLM's own rate, in its own column; the by-source counter still decides
    # InferenceX's gpu rate (local_cache_hit 0 / 197008)
    assert e[Col.GPU_PREFIX_CACHE_HIT_RATE_GAUGE] == 0.42
    assert e[Col.GPU_PREFIX_CACHE_HIT_RATE] == 0.0


def test_before_after_pair_gives_the_benchmark_deltas_whatever_the_order() -> None:
    after, before = source(SCRAPE).text(), before_text()
    row, first, last = delta_row((after, "after.txt"), (before, "before.txt"))
    assert (first, last) == ("before.txt", "after.txt")
    # Δdrafts 43680 - 21936 = 21744, Δaccepted 58695 - 29250 = 29445, Δdraft tokens 65232:
    # exactly the console's conc-64 block. AL = 1 + 29445 / 21744 = 2.354166...
    assert (row[Col.SPEC_DRAFTS], row[Col.SPEC_ACCEPTED_TOKENS], row[Col.SPEC_DRAFT_TOKENS]) == (
        21744.0,
        29445.0,
        65232.0,
    )
    assert row[Col.AL_MEASURED] == pytest.approx(2.3541666666666665)
    assert row[Col.ACCEPT_RATE_PER_POS] == pytest.approx(
        [(29030 - 14480) / 21744, (18342 - 9110) / 21744, (11323 - 5660) / 21744]
    )
    assert row[Col.AL_SOURCE] == "prometheus_delta"


def test_pair_unit_claims_two_scrapes_and_names_the_later_first() -> None:
    files = [
        text_file("cap/after.prom", source(SCRAPE).text()),
        text_file("cap/before.prom", before_text()),
    ]
    assert PAIR.sniff_unit(files) and not PAIR.sniff_unit(files[:1])
    res = PAIR.read_unit(list(reversed(files)))
    assert res.consumed == ["cap/after.prom", "cap/before.prom"]
    assert res.enrich[Col.SPEC_DRAFTS] == 21744.0


def test_a_restart_between_scrapes_is_refused() -> None:
    after = _with(
        source(SCRAPE).text(), {"process_cpu_seconds_total": 1.0}
    )  # fell, while drafts rose
    with pytest.raises(ParseError, match="restarted"):
        delta_row((before_text(), "before.txt"), (after, "after.txt"))


def test_scrapes_of_different_servers_are_refused() -> None:
    other = "# HELP x_total x\n# TYPE x_total counter\nx_total 3.0\n"
    with pytest.raises(ParseError, match="no counter series"):
        delta_row((source(SCRAPE).text(), "a.txt"), (other, "b.txt"))


def test_a_scrape_without_vllm_counters_stores_nothing() -> None:
    src = text_file("m/metrics.txt", "# HELP up up\n# TYPE up gauge\nup 1.0\n")
    assert SNAPSHOT.sniff(src, None)
    res = SNAPSHOT.read(src, None)
    assert res.enrich == {} and "nothing to store" in res.notes[0]


def test_sniffing_reads_content() -> None:
    log = "vllm/inferencex_mtp-fixed-ar-minimax-lcb-v8-20260529-092323/vllm_server.excerpt_specdecoding.log"
    assert not SNAPSHOT.sniff(source(log), None)
    assert not SNAPSHOT.sniff(text_file("x/metrics.txt", "vllm:a_total 1\n"), None)  # no TYPE lines
    assert SNAPSHOT.sniff(text_file("x/scrape.log", source(SCRAPE).text()), None)


@pytest.mark.parametrize(
    "text",
    [
        '# TYPE vllm:x_total counter\nvllm:x_total{engine="0"} garbage\n',
        '# TYPE vllm:x counter\nvllm:x_total{engine="0"} +Inf\n',
        '# TYPE vllm:x counter\nvllm:x_total{engine="0 1.0\n',
    ],
)
def test_malformed_exposition_raises_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        snapshot_row(text, "bad.txt")


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_mutated_scrapes_raise_only_parse_errors(data: st.DataObject) -> None:
    text = data.draw(mutated_text(source(SCRAPE).text()))
    src = text_file("m/metrics.txt", text)
    if SNAPSHOT.sniff(src, None):
        with contextlib.suppress(ParseError):
            SNAPSHOT.read(src, None)
    with contextlib.suppress(ParseError):
        delta_row((text, "a.txt"), (before_text(), "b.txt"))
