"""A run whose files say no GPU count: the page offers the totals and says why per-GPU is empty."""

from __future__ import annotations

from pathlib import Path

from dashboard.figures import frontier
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store
from views.charts import FrontierChart
from views.query.choices import Y_CHOICES
from views.query.state import RunView
from views.source import DataSource

# A real appended vLLM/SGLang request-rate sweep: results.json names no GPU count.
SWEEP = (
    Path(__file__).resolve().parents[1]
    / "fixtures/wild/vllm_bench_serve/rate_sweep_framework/fce30a0/results.json"
)


def _figure(source: DataSource, y: str) -> dict[str, object]:
    view = RunView(runs=("rate",), y=y)
    data = source.run_data(view)
    return frontier.frontier_figure(
        FrontierChart(
            data.main_plane, (), (), x=view.x, y=view.y, runs=view.runs, arm_order=data.arm_order
        )
    )


def test_per_gpu_says_why_it_is_empty_and_the_totals_draw(tmp_path: Path) -> None:
    st = Store(tmp_path)
    ingest_paths([SWEEP], st, run_id="rate")
    assert st.points(["rate"]).get_column(Col.NUM_GPUS).null_count() == 12
    assert Col.TOTAL_TPUT in dict(Y_CHOICES)  # offered as a y axis
    source = DataSource(st)
    per_gpu = _figure(source, Col.TPUT_PER_GPU)
    notes = [a["text"] for a in per_gpu["layout"]["annotations"]]  # type: ignore[index]
    assert notes == [
        "none of the 12 points records its GPU count, so there is no Total tok/s/GPU: choose a "
        "total throughput (all GPUs) as y, or ingest with --set num_gpus=N"
    ]
    total = _figure(source, Col.TOTAL_TPUT)
    drawn = sum(
        len(t.get("x") or [])  # type: ignore[union-attr]
        for t in total["data"]  # type: ignore[union-attr]
        if t.get("mode") == "markers+text"  # type: ignore[union-attr]
    )
    assert drawn == 12  # the vLLM and the SGLang arm, 6 request rates each
