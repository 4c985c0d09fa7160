"""The InferenceX app dump the side-by-side benchmark serves: three real points written and read back.

The input is the three real Kimi-K2.5 MI355X vLLM MTP aggregate rows of
tests/fixtures/inferencex/agg_fixed_seq (1k1k at conc 4; 8k1k at conc 32 and 64), ingested by
the real pipeline. Values below are copied from those files.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from benchmarks.inferencex_dump import TABLES, AppView, DumpCounts, DumpError, write_dump
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.sources.dump import ingest_dump
from ingest.store import Store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "inferencex" / "agg_fixed_seq"


@pytest.fixture(scope="module")
def points(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    store = Store(tmp_path_factory.mktemp("kimi"))
    report = ingest_paths([FIX], store, run_id="kimi")
    assert report.accepted == 3
    return store.points(["kimi"])


@pytest.fixture(scope="module")
def dump(points: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dump")
    counts = write_dump(points, out)
    # two arms (1k1k and 8k1k are separate comparison groups), one hardware, one app view
    assert counts == DumpCounts(configs=2, benchmarks=3, availability=1, run_stats=1)
    return out


def _table(dump: Path, name: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads((dump / name).read_text())
    return rows


def test_tables_read_back(dump: Path) -> None:
    assert sorted(p.name for p in dump.iterdir()) == sorted(TABLES)
    configs = _table(dump, "configs.json")
    assert [c["id"] for c in configs] == [1, 2]
    for c in configs:
        assert {k: v for k, v in c.items() if k != "id"} == {
            "hardware": "mi355x", "framework": "vllm", "model": "kimik2.5", "precision": "int4",
            "spec_method": "mtp", "disagg": False, "is_multinode": False,
            "prefill_tp": 8, "prefill_ep": 1, "prefill_dp_attention": False, "prefill_num_workers": 1,
            "decode_tp": 8, "decode_ep": 1, "decode_dp_attention": False, "decode_num_workers": 1,
            "num_prefill_gpu": 8, "num_decode_gpu": 8,
        }  # fmt: skip
    results = {int(str(r["conc"])): r for r in _table(dump, "benchmark_results.json")}
    assert sorted(results) == [4, 32, 64]
    r32 = results[32]
    assert (r32["isl"], r32["osl"], r32["date"], r32["error"]) == (8192, 1024, "2026-03-30", None)
    assert r32["image"] == "vllm/vllm-openai-rocm:v0.21.0"
    m = r32["metrics"]
    assert isinstance(m, dict)
    # the conc-32 file: tput_per_gpu, median_intvty, p99_ttft (seconds) as written there
    assert m["tput_per_gpu"] == pytest.approx(157.12165563281164)
    assert m["median_intvty"] == pytest.approx(4.3418380529066685)
    assert m["p99_ttft"] == pytest.approx(14.490030684259256)
    # conc 32 and 64 share the 8k1k arm's config; conc 4 is the 1k1k arm's
    assert r32["config_id"] == results[64]["config_id"] != results[4]["config_id"]
    assert _table(dump, "run_stats.json") == [
        {"id": 1, "workflow_run_id": 1, "date": "2026-03-30", "hardware": "mi355x",
         "n_success": 3, "total": 3}
    ]  # fmt: skip
    assert _table(dump, "availability.json") == [
        {"model": "kimik2.5", "isl": 8192, "osl": 1024, "precision": "int4", "hardware": "mi355x",
         "framework": "vllm", "spec_method": "mtp", "disagg": False, "date": "2026-03-30"}
    ]  # fmt: skip
    (run,) = _table(dump, "workflow_runs.json")
    assert (run["github_run_id"], run["run_attempt"], run["conclusion"]) == (
        AppView().github_run_id,
        1,
        "success",
    )
    assert _table(dump, "eval_results.json") == []


def test_project_dump_reader_reads_the_same_points(dump: Path, tmp_path: Path) -> None:
    store = Store(tmp_path)
    report = ingest_dump(dump, store)
    assert report.accepted == 3 and not report.rejected
    got = store.points([str(AppView().github_run_id)]).sort(Col.CONC)
    assert got.get_column(Col.CONC).to_list() == [4, 32, 64]
    assert got.get_column(Col.TPUT_PER_GPU).to_list()[1] == pytest.approx(157.12165563281164)
    assert got.get_column(Col.HW).unique().to_list() == ["mi355x"]


def test_a_point_without_interactivity_is_refused(points: pl.DataFrame, tmp_path: Path) -> None:
    broken = points.with_columns(
        pl.when(pl.col(Col.CONC) == 64).then(None).otherwise(pl.col(Col.MEDIAN_INTVTY))
        .alias(Col.MEDIAN_INTVTY)
    )  # fmt: skip
    with pytest.raises(DumpError, match="1 point\\(s\\) without median_intvty"):
        write_dump(broken, tmp_path)
