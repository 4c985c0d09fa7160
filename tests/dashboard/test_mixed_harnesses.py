"""Real outputs of four harnesses (GuideLLM, llmperf, trtllm-bench, genai-bench), ingested as four
runs, overlay on one run page (`unofficialRun=g,l,t,b`): each point's hover and the points table
name its harness and version. GuideLLM, llmperf and genai-bench measured endpoints whose GPU
count their files do not give, so those runs are ingested as a user would, with `--set`
(`num_gpus=1`, `hw=h100`); trtllm-bench's report states its own."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from dashboard.app import create_app
from dashboard.pages.run_charts import main_figure
from ingest.pipeline import ingest_paths
from ingest.store import Store
from views.query.state import RunView
from views.source import DataSource

WILD = Path(__file__).resolve().parent.parent / "fixtures" / "wild"
RUNS = {
    "g": WILD / "guidellm" / "rsevilla87_guidellm-results-parser_d6d6945",
    "l": WILD / "llmperf" / "gpt-4.1-nano_20260120_165625",
    "t": WILD / "trtllm_bench" / "in128_out40_bs1.json",
    "b": WILD / "genai_bench" / "gpt-oss-120b_trtllm",
}
VIEW = RunView(runs=tuple(RUNS))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    st = Store(tmp_path_factory.mktemp("mixed"))
    for run, path in RUNS.items():
        defaults = None if run == "t" else {"num_gpus": 1, "hw": "h100"}
        report = ingest_paths([path], st, run_id=run, defaults=defaults)
        assert report.rejected == []
    return st


def test_the_points_table_names_each_points_harness_and_version(store: Store) -> None:
    table = DataSource(store).run_data(VIEW).points_table
    got = (
        table.group_by("run_id")
        .agg(pl.len(), pl.col("harness").unique(), pl.col("harness_version").unique())
        .sort("run_id")
        .rows()
    )
    assert got == [
        ("b", 3, ["genai-bench"], ["0.0.2"]),
        ("g", 1, ["guidellm"], ["0.2-0.3"]),  # the report states no version: its schema's range
        ("l", 6, ["llmperf"], ["2023-08-31"]),
        ("t", 1, ["trtllm-bench"], ["1.2.0"]),
    ]
    # the numbers beside them are the files' (trtllm-bench: 556.386 output tok/s, TTFT 3.677 ms)
    t = table.filter(pl.col("run_id") == "t").row(0, named=True)
    assert t["output_tput"] == pytest.approx(556.38594, rel=1e-6)
    assert t["median_ttft"] == pytest.approx(0.003677, rel=1e-3)


def test_every_hover_names_the_harness(store: Store) -> None:
    fig = main_figure(DataSource(store).run_data(VIEW), VIEW)
    configs: dict[str, set[str]] = {}
    for trace in fig["data"]:
        for row in trace.get("customdata") or []:
            configs.setdefault(str(row[1]), set()).add(str(row[9]))
    assert configs == {
        "g": {"h100 ·  · 1 GPUs · guidellm 0.2-0.3"},
        "l": {"h100 ·  · 1 GPUs · llmperf 2023-08-31"},
        "t": {" · trt · bf16 · 1 GPUs · trtllm-bench 1.2.0"},
        "b": {"h100 · trt · 1 GPUs · genai-bench 0.0.2"},
    }
    templates = {t["hovertemplate"] for t in fig["data"] if t.get("customdata")}
    assert templates and all("%{customdata[9]}" in t for t in templates)


def test_the_points_export_carries_the_harness_columns(store: Store) -> None:
    client = create_app(store.root).server.test_client()
    r = client.get("/export/points.csv?unofficialRun=g,l,t,b")
    assert r.status_code == 200
    frame = pl.read_csv(r.data)
    assert sorted(set(frame.select("run_id", "harness").iter_rows())) == [
        ("b", "genai-bench"),
        ("g", "guidellm"),
        ("l", "llmperf"),
        ("t", "trtllm-bench"),
    ]
