"""Auxiliary measurements join exactly one point they agree with, or none with a reason (issue 12
item 6). Real files only: vLLM `bench serve` results of two models and a real `/metrics` scrape.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl

from ingest.attach import Candidate, choose, token_verdict, window_verdict
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.readers.prometheus import snapshot
from ingest.report import IngestReport
from ingest.store import Store

FIX = Path(__file__).resolve().parent.parent / "fixtures"
LOCAL = FIX / "inferencex" / "raw_bench_serving" / "local-results"
MINIMAX_1K = LOCAL / "minimax-eagle3-conc64" / "minimaxm2.5_1k1k_conc64.json"  # MiniMax-M2.5
MINIMAX_8K = LOCAL / "minimax-eagle3-conc64" / "minimaxm2.5_8k1k_conc64_gmu090.json"
KIMI_1K = LOCAL / "mxfp4-eagle3-conc64" / "kimik2.5_1k1k_conc64.json"  # amd/Kimi-K2.5-MXFP4
# model_name="MiniMaxAI/MiniMax-M2.5" on every vllm: series; counters since server start.
SCRAPE = (
    FIX
    / "vllm"
    / "inferencex_mtp-fixed-ar-minimax-lcb-v8-20260529-092323"
    / "livecodebench_metrics.txt"
)


def _ingest(tmp: Path, *files: Path) -> tuple[IngestReport, pl.DataFrame]:
    run = tmp / "run"
    run.mkdir()
    for f in files:
        shutil.copy(f, run / f.name)
    store = Store(tmp / "store")
    report = ingest_paths([run], store, run_id="att")
    return report, store.points(["att"])


def _by_model(points: pl.DataFrame) -> dict[str, dict[str, object]]:
    return {str(r[Col.MODEL]): r for r in points.to_dicts()}


def test_a_scrape_joins_the_point_of_its_model_only(tmp_path: Path) -> None:
    report, points = _ingest(tmp_path, MINIMAX_1K, KIMI_1K, SCRAPE)
    got = _by_model(points)
    minimax, kimi = got["MiniMaxAI/MiniMax-M2.5"], got["amd/Kimi-K2.5-MXFP4"]
    # The scrape's counter columns land on the MiniMax point (vllm:num_preemptions_total 0; the
    # prompt tokens by source are all local_compute: local_cache_hit 0 / Σ = 0.0) ...
    assert minimax[Col.NUM_PREEMPTIONS] == 0.0 and minimax[Col.GPU_PREFIX_CACHE_HIT_RATE] == 0.0
    # ... and nothing on the Kimi point.
    assert kimi[Col.NUM_PREEMPTIONS] is None and kimi[Col.GPU_PREFIX_CACHE_HIT_RATE] is None
    joined = [o for o in report.auxiliary if o.path == SCRAPE.name]
    assert [o.point_ids for o in joined] == [(minimax[Col.POINT_ID],)]
    assert not [i for i in report.ignored if i.path == SCRAPE.name]


def test_a_scrape_of_a_model_no_point_has_is_ignored_with_the_reason(tmp_path: Path) -> None:
    report, points = _ingest(tmp_path, KIMI_1K, SCRAPE)
    (kimi,) = points.to_dicts()
    assert kimi[Col.NUM_PREEMPTIONS] is None and kimi[Col.GPU_PREFIX_CACHE_HIT_RATE] is None
    assert not [o for o in report.auxiliary if o.path == SCRAPE.name]
    (ignored,) = [i for i in report.ignored if i.path == SCRAPE.name]
    assert "MiniMaxAI/MiniMax-M2.5 matches no point" in ignored.reason
    assert "amd/Kimi-K2.5-MXFP4" in ignored.reason and ignored.run_id == "att"
    assert {"path": SCRAPE.name, "reason": ignored.reason} in report.to_json()["ignored"]


def test_a_scrape_beside_two_points_of_its_model_joins_neither(tmp_path: Path) -> None:
    report, points = _ingest(tmp_path, MINIMAX_1K, MINIMAX_8K, SCRAPE)
    assert points.height == 2
    assert points.get_column(Col.NUM_PREEMPTIONS).to_list() == [None, None]
    assert not [o for o in report.auxiliary if o.path == SCRAPE.name]
    (ignored,) = [i for i in report.ignored if i.path == SCRAPE.name]
    # Both are MiniMax-M2.5 points; the scrape has no timestamps, and its counters since server
    # start (prompt 197008, generation 102400 tokens) are below either point's totals (590227 /
    # 589961 and 4727544 / 589927), so neither window nor tokens pick one.
    assert "could belong to 2 points" in ignored.reason
    assert MINIMAX_1K.name in ignored.reason and MINIMAX_8K.name in ignored.reason


def test_token_totals_and_windows_pick_exactly_one() -> None:
    _, scope = snapshot(SCRAPE.read_text(), SCRAPE.name)
    # vllm:prompt_tokens_total 197008 and vllm:generation_tokens_total 102400 since server start
    assert (scope["prompt_tokens"], scope["generation_tokens"]) == (197008.0, 102400.0)
    small = {Col.MODEL: "MiniMaxAI/MiniMax-M2.5", Col.TOTAL_INPUT_TOKENS: 98504}
    big = {Col.MODEL: "MiniMaxAI/MiniMax-M2.5", Col.TOTAL_INPUT_TOKENS: 590227}
    assert token_verdict(scope, small) is True and token_verdict(scope, big) is False
    choice = choose(scope, {}, [Candidate("big.json", big), Candidate("small.json", small)])
    assert choice.index == 1
    # The server started at the earliest `_created` (1780061429.34): a point that ended before it
    # cannot be in these counters; one inside it can.
    start = scope["window"][0]
    assert window_verdict(scope, (start - 600, start - 60)) is False
    assert window_verdict(scope, (start + 60, start + 600)) is True
    # An export's window must overlap at least half of the point's requests.
    export = {"window": [100.0, 200.0], "since_start": False}
    assert window_verdict(export, (110.0, 190.0)) is True
    assert window_verdict(export, (300.0, 400.0)) is False


def test_one_point_of_unknown_model_takes_the_scrape() -> None:
    _, scope = snapshot(SCRAPE.read_text(), SCRAPE.name)
    assert choose(scope, {}, [Candidate("p.json", {})]).index == 0
    two = [Candidate("a.json", {}), Candidate("b.json", {})]
    assert choose(scope, {}, two).index is None
