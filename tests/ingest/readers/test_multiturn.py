"""Pre-aiperf multi-turn runs: the polled /metrics CSV enriches the flat aggregate (no point of its
own: no client latencies); a sweep's experiment_summary.csv is one point per row."""

from __future__ import annotations

import contextlib
import csv
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError, SchemaError
from ingest.readers.multiturn import ExperimentSummaryReader, MultiturnRunReader, read_polled
from tests.ingest.readers._support import norm, source
from tests.ingest.readers._unit_support import mutated_text, text_file, unit

RUNS = "inferencex/multiturn_runs"
OFF = f"{RUNS}/agentic_dsr1_tp8_bs16_offloadoff_fp4_vllm_tp8-ep8-dpafalse_disagg-false_spec-none_conc16_b200-dgxc-slurm_2"
ON = f"{RUNS}/agentic_dsr1_tp8_bs16_offloadon_fp4_vllm_tp8-ep8-dpafalse_disagg-false_spec-none_conc16_b200-dgxc-slurm_7"
SUMMARY = f"{RUNS}/sweep_results_20260204_062339/experiment_summary.csv"
RUN, SWEEP = MultiturnRunReader(), ExperimentSummaryReader()


def test_offload_off_run_enriches_with_peaks_series_and_flags() -> None:
    files = unit(OFF)
    assert RUN.sniff_unit(files)
    res = RUN.read_unit(files)
    assert res.points == [] and res.rejects == []
    e = res.enrich
    # kv_cache_usage_pct peaks at 39.59 % (t = 1343 s); CPU usage stays 0; no preemptions
    assert e[Col.PEAK_GPU_KV_USAGE] == pytest.approx(0.3959)
    assert (e[Col.PEAK_CPU_KV_USAGE], e[Col.NUM_PREEMPTIONS]) == (0.0, 0.0)
    flags = json.loads(e[Col.SERVER_FLAGS])
    # the command line plus the --config YAML beside it
    assert flags["kv-cache-dtype"] == "fp8" and flags["async-scheduling"] is True
    assert (
        flags["tensor-parallel-size"] == "8" and flags["config"] == "/workspace/results/config.yaml"
    )
    # 149 samples x 23 metric columns
    assert len(res.series) == 149 * 23
    kv = [s for s in res.series if s["metric"] == "kv_cache_usage_pct"]
    assert (kv[0]["t"], kv[0]["value"], kv[-1]["t"], kv[-1]["value"]) == (0.0, 0.5, 1344.933, 30.76)
    assert any("no samples for 1190 s after t=146 s" in n for n in res.notes)
    assert e[Col.WARNINGS] == [
        "/metrics polling: no samples for 1190 s after t=146 s (peaks may be missed)"
    ]
    assert any("no point of its own" in n for n in res.notes)
    assert res.consumed[0].endswith("metrics_server_metrics.csv") and len(res.consumed) == 5


def test_offload_on_run_keeps_its_offload_flags() -> None:
    res = RUN.read_unit(unit(ON))
    assert res.enrich[Col.PEAK_GPU_KV_USAGE] == pytest.approx(0.3926)
    assert len(res.series) == 236 * 23
    flags = json.loads(res.enrich[Col.SERVER_FLAGS])
    assert (flags["kv-offloading-backend"], flags["kv-offloading-size"]) == ("native", "600")
    assert not any("no samples" in n for n in res.notes)  # largest gap 4.1 s


def test_a_failed_status_is_reported() -> None:
    files = [f for f in unit(OFF) if f.name != "status.txt"] + [
        text_file(f"{OFF}/status.txt", "FAILED\n")
    ]
    assert any("run status 'FAILED'" in n for n in RUN.read_unit(files).notes)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("timestamp_sec,relative_time_sec,kv_cache_usage_pct\n", ""),
        (
            "timestamp_sec,relative_time_sec,kv_cache_usage_pct\n1,0,x\n",
            "line 2 kv_cache_usage_pct",
        ),
        ("timestamp_sec,relative_time_sec,kv_cache_usage_pct\n1,0\n", "line 2"),
        (
            "timestamp_sec,relative_time_sec,kv_cache_usage_pct\n1,0,inf\n",
            "line 2 kv_cache_usage_pct",
        ),
    ],
)
def test_bad_polled_csv_raises_parse_error(text: str, field: str) -> None:
    with pytest.raises(ParseError) as err:
        read_polled(text, "m.csv")
    assert err.value.field == field


def test_experiment_summary_rows_are_points() -> None:
    src = source(SUMMARY)
    assert SWEEP.sniff(src, None) and not RUN.sniff_unit([src])
    res = SWEEP.read(src, None)
    assert len(res.points) == 46 and res.rejects == []
    rows = {r["exp_name"]: r for r in csv.DictReader(src.text().splitlines())}
    points = [norm(src, p) for p in res.points]
    for raw, p in zip(rows.values(), points, strict=True):
        # the summary's own per-GPU and interactivity columns are what normalize derives
        assert p[Col.TPUT_PER_GPU] == pytest.approx(float(raw["total_tps_per_gpu"]))
        assert p[Col.INPUT_TPUT_PER_GPU] == pytest.approx(float(raw["input_tps_per_gpu"]))
        assert p[Col.MEDIAN_INTVTY] == pytest.approx(float(raw["interactivity"]))
    p = next(p for p in points if (p[Col.TP], p[Col.CONC], p[Col.KV_OFFLOADING]) == (8, 16, "none"))
    # tp8_bs16_offloadoff: 7687.6471597627105 tok/s over 8 GPUs; p50 TPOT 9.089 ms
    assert p[Col.TPUT_PER_GPU] == pytest.approx(7687.6471597627105 / 8)
    assert p[Col.OUTPUT_TPUT] == pytest.approx(7687.6471597627105 - 5964.656583472347)
    assert (p[Col.MEDIAN_TPOT], p[Col.P999_TTFT]) == pytest.approx((0.009089, 0.5462492939999999))
    assert p[Col.MEDIAN_E2EL] == pytest.approx(4.791256)
    assert p[Col.GPU_PREFIX_CACHE_HIT_RATE] == pytest.approx(0.8795179566423599)
    assert p[Col.EXTERNAL_PREFIX_CACHE_HIT_RATE] is None  # empty cell with offload off
    assert (p[Col.SCENARIO], p[Col.MODEL], p[Col.SCHEMA_VARIANT]) == (
        "agentic-coding",
        None,
        "multiturn_summary",
    )
    on = next(
        p for p in points if (p[Col.TP], p[Col.CONC], p[Col.KV_OFFLOADING]) == (8, 128, "dram")
    )
    assert on[Col.EXTERNAL_PREFIX_CACHE_HIT_RATE] == 0.0


def test_a_bad_summary_row_is_rejected_and_the_rest_kept() -> None:
    lines = source(SUMMARY).text().splitlines()
    lines[2] = (
        lines[2].replace(",on,", ",maybe,", 1)
        if ",on," in lines[2]
        else lines[2].replace(",off,", ",maybe,", 1)
    )
    lines[3] = lines[3].replace(lines[3].split(",")[5], "fast", 1)
    res = SWEEP.read(text_file("s/experiment_summary.csv", "\n".join(lines) + "\n"), None)
    assert len(res.points) == 44 and len(res.rejects) == 2
    assert res.rejects[0].field == "line 3" and res.rejects[0].row == "tp1_bs32_offloadon"
    assert res.rejects[1].field == "line 4 throughput_rps"


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_mutated_inputs_raise_only_contract_errors(data: st.DataObject) -> None:
    polled = data.draw(mutated_text(source(f"{OFF}/metrics_server_metrics.csv").text()))
    files = [f for f in unit(OFF) if f.name != "metrics_server_metrics.csv"]
    files.append(text_file(f"{OFF}/metrics_server_metrics.csv", polled))
    if RUN.sniff_unit(files):
        with contextlib.suppress(ParseError):
            RUN.read_unit(files)
    src = text_file("s/experiment_summary.csv", data.draw(mutated_text(source(SUMMARY).text())))
    if SWEEP.sniff(src, None):
        for point in SWEEP.read(src, None).points:
            with contextlib.suppress(SchemaError):
                norm(src, point)
