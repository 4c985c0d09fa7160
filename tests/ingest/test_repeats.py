"""Issue 23, item 3: one rule for repeats in every format.

- tests/fixtures/wild/sglang_bench_serving/datacrunch_h200_llama33_70b_offline.jsonl: a real
  `sglang.bench_serving --output-file` file whose lines 4 and 5 are the same command (random
  4096/1024, 1500 prompts, all at once) run twice and appended (PROVENANCE.md there);
- a real `vllm bench sweep serve` combination with run=0..2 (tests/fixtures/wild/vllm_bench_sweep).

Both give one point per configuration and load with `repeats`, `repeat_tput_spread` =
(max - min) / mean of the repeats' total throughput, and every repeat in `points --repeats`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.cli import app

WILD = Path(__file__).resolve().parent.parent / "fixtures" / "wild"
JSONL = WILD / "sglang_bench_serving" / "datacrunch_h200_llama33_70b_offline.jsonl"
SWEEP = (
    WILD
    / "vllm_bench_sweep"
    / "fmms_gpt_oss_120b"
    / "gpt-oss-120b"
    / "baseline"
    / "20260211_140427"
    / "BENCH--max_concurrency=16-num_prompts=160-request_rate=16"
)


def _lines() -> list[dict[str, float]]:
    return [json.loads(line) for line in JSONL.read_text().splitlines()]


def _total(line: dict[str, float]) -> float:
    return (line["total_input_tokens"] + line["total_output_tokens"]) / line["duration"]


def _points_csv(store: Path, run: str) -> pl.DataFrame:
    res = CliRunner().invoke(
        app, ["points", "--run", run, "--repeats", "--format", "csv", "--store", str(store)]
    )
    assert res.exit_code == 0, res.output
    return pl.read_csv(io.StringIO(res.stdout))


def test_an_appended_repeat_is_one_point_with_its_count_and_spread(tmp_path: Path) -> None:
    lines = _lines()
    l4, l5 = lines[3], lines[4]
    assert [(x["random_input_len"], x["random_output_len"], x["completed"]) for x in (l4, l5)] == [
        (4096, 1024, 1500),
        (4096, 1024, 1500),
    ]
    store = Store(tmp_path / "s")
    report = ingest_paths([JSONL], store, run_id="off")
    assert report.rejected == []  # no line is dropped
    pts = store.points(["off"])
    assert pts.height == 6  # 7 lines, two of them one configuration and load
    (p,) = pts.filter((pl.col(Col.ISL) == 4096) & (pl.col(Col.OSL) == 1024)).to_dicts()
    t4, t5 = _total(l4), _total(l5)  # 8398.34 and 8387.51 tok/s
    assert p[Col.REPEATS] == 2
    assert p[Col.REPEAT_SPREAD] == pytest.approx(abs(t4 - t5) / ((t4 + t5) / 2), rel=1e-12)
    assert round(p[Col.REPEAT_SPREAD], 6) == 0.001289
    # every measured column is the mean of the repeats (counts rounded)
    assert p[Col.OUTPUT_TPUT] == pytest.approx(
        (l4["output_throughput"] + l5["output_throughput"]) / 2, rel=1e-12
    )
    assert p[Col.DURATION] == pytest.approx((l4["duration"] + l5["duration"]) / 2, rel=1e-12)
    assert p[Col.MEDIAN_TTFT] == pytest.approx(
        (l4["median_ttft_ms"] + l5["median_ttft_ms"]) / 2000, rel=1e-12
    )
    assert any("the mean of 2 measurements" in w for w in p[Col.WARNINGS])
    # each underlying measurement stays retrievable
    reps = _points_csv(tmp_path / "s", "off")
    mine = reps.filter(pl.col("point_id") == p[Col.POINT_ID]).sort("repeat")
    assert mine["repeat"].to_list() == [1, 2]
    assert mine["duration"].to_list() == [l4["duration"], l5["duration"]]
    assert mine["output_tput"].to_list() == [l4["output_throughput"], l5["output_throughput"]]
    assert reps.height == 7  # one row per line of the file


def test_a_sweep_tree_follows_the_same_rule(tmp_path: Path) -> None:
    runs = [json.loads((SWEEP / f"run={n}.json").read_text()) for n in range(3)]
    store = Store(tmp_path / "s")
    ingest_paths([SWEEP], store, run_id="sweep")
    (p,) = store.points(["sweep"]).to_dicts()
    tputs = [r["total_token_throughput"] for r in runs]
    assert p[Col.REPEATS] == 3
    assert p[Col.REPEAT_SPREAD] == pytest.approx(
        (max(tputs) - min(tputs)) / (sum(tputs) / 3), rel=1e-12
    )
    reps = _points_csv(tmp_path / "s", "sweep").sort("repeat")
    assert reps["repeat"].to_list() == [1, 2, 3]
    assert reps["total_tput"].to_list() == pytest.approx(tputs, rel=1e-12)
    assert [s.rsplit("/", 1)[-1] for s in reps["repeat_source"]] == [
        "run=0.json",
        "run=1.json",
        "run=2.json",
    ]
