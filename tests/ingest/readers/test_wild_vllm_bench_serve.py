"""Real `benchmark_serving.py` / `vllm bench serve` results from public repositories, 2024 to today.

The files and where they come from: tests/fixtures/wild/vllm_bench_serve/PROVENANCE.md. Every
expected value below is worked out by hand from the file's own numbers (the arithmetic is in the
comments), not copied from what the reader returns.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.pipeline import ingest_paths
from ingest.readers.base import JsonDocs, SourceFile
from ingest.readers.bench_serving import BenchServingReader
from ingest.reading import parse_json
from ingest.store import Store
from tests.ingest.readers._support import FIXTURES, norm, source

MS = BenchServingReader()
WILD = "wild/vllm_bench_serve"
OLD_2024 = f"{WILD}/old_2024_lambdalabs/1xA100-80GB-SXM/Meta-Llama-3-8B-Instruct_tp1_len2000.json"
LLMD = f"{WILD}/llmd_l40s_metadata/13ee6ea/results.json"
LLMD_OLD = f"{WILD}/llmd_l40s_metadata/257d842/results.json"
SWEEP_FW = f"{WILD}/rate_sweep_framework/f747824/results.json"
SWEEP_FW_OLD = f"{WILD}/rate_sweep_framework/fce30a0/results.json"
SWEEP_RUN0 = (
    f"{WILD}/bench_serve_sweep_v0.25.1/"
    "SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8/run=0.json"
)
NEW = f"{WILD}/bench_serve_v0.25.1/bench_serve_v0.25.1.json"
SPEC = f"{WILD}/bench_serve_spec_decode_v0.25.1/bench_serve_speculative_v0.25.1.json"


def _rows(rel: str, data: bytes | None = None) -> list[dict[str, object]]:
    src = source(rel, data)
    doc = parse_json(src)
    assert MS.sniff(src, doc), rel
    res = MS.read(src, doc)
    assert not res.rejects, res.rejects
    return [norm(src, p) for p in res.points]


def _one(rel: str) -> dict[str, object]:
    rows = _rows(rel)
    assert len(rows) == 1
    return rows[0]


# ---- 2024: benchmark_serving.py without max_concurrency or total_token_throughput ----------


def test_2024_file_request_rate_inf_and_throughput_from_input_plus_output() -> None:
    row = _one(OLD_2024)
    # no max_concurrency key at all (added late 2024), request_rate "inf": the load is rate = inf
    assert row[Col.CONC] is None and row[Col.REQUEST_RATE] == math.inf
    # no total_token_throughput: input_throughput + output_throughput
    # = 159.80232932470813 + 227.03837146571024 = 386.84070079041837 tok/s
    assert row[Col.TOTAL_TPUT] == pytest.approx(386.84070079041837)
    assert row[Col.OUTPUT_TPUT] == pytest.approx(227.03837146571024)
    assert row[Col.INPUT_TPUT] == pytest.approx(159.80232932470813)
    # directory 1xA100-80GB-SXM: 1 GPU; the name says _tp1_
    assert (row[Col.NUM_GPUS], row[Col.TP], row[Col.HW_LABEL]) == (1, 1, "A100-80GB-SXM")
    assert row[Col.HW] == "a100"
    assert row[Col.TPUT_PER_GPU] == pytest.approx(386.84070079041837 / 1)
    # median_ttft_ms 139.06319253146648 / 1000
    assert row[Col.MEDIAN_TTFT] == pytest.approx(0.13906319253146648)
    # median interactivity = 1 / (11.955695146418893 ms / 1000) = 83.642 tok/s/user
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 11.955695146418893)
    assert (row[Col.NUM_REQUESTS_TOTAL], row[Col.NUM_REQUESTS_SUCCESSFUL]) == (10, 10)
    # input_lens 13+25+27+10+329+29+399+328+4+205 = 1369 over 10 requests
    assert row[Col.MEAN_INPUT_LEN] == pytest.approx(136.9)
    assert row[Col.MODEL] == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert row[Col.METADATA] is None  # best_of, use_beam_search, *_latency_ms are vLLM's own
    assert row[Col.WARNINGS] == ["GPU count 1 taken from the file name and its directory"]


# ---- --metadata gpu=4xNVIDIA_L40S, one document per line, request-rate sweep -----------------


def test_metadata_file_gives_one_point_per_line_with_gpus_from_metadata() -> None:
    rows = _rows(LLMD)
    assert len(rows) == 9  # 3 deployments x request rates 10, 30, inf
    assert [r[Col.REQUEST_RATE] for r in rows] == [10.0, 30.0, math.inf] * 3
    assert all(r[Col.CONC] is None for r in rows)  # max_concurrency: null
    first = rows[0]
    # gpu=4xNVIDIA_L40S
    assert (first[Col.NUM_GPUS], first[Col.HW_LABEL], first[Col.TP]) == (4, "NVIDIA_L40S", None)
    # total_token_throughput 10619.275253401978 over 4 GPUs = 2654.8188133504945
    assert first[Col.TOTAL_TPUT] == pytest.approx(10619.275253401978)
    assert first[Col.TPUT_PER_GPU] == pytest.approx(10619.275253401978 / 4)
    assert first[Col.OUTPUT_TPUT] == pytest.approx(2258.212337970085)
    # median_ttft_ms 52.868896000063614 -> s; 1000 / median_tpot_ms 13.686303201518745
    assert first[Col.MEDIAN_TTFT] == pytest.approx(0.052868896000063614)
    assert first[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 13.686303201518745)
    assert (first[Col.NUM_REQUESTS_TOTAL], first[Col.NUM_REQUESTS_SUCCESSFUL]) == (300, 300)
    # input_len=1000 output_len=500 (strings from --metadata) are the nominal lengths
    assert (first[Col.ISL], first[Col.OSL]) == (1000, 500)
    assert json.loads(str(first[Col.METADATA])) == {
        "deployment": "no-features",
        "gpu": "4xNVIDIA_L40S",
        "model": "meta-llama/Llama-3.2-3B-Instruct",
        "gateway": "kgateway",
        "prefill_replicas": "0",
        "decode_replicas": "4",
        "input_len": "1000",
        "output_len": "500",
    }
    deployments = [json.loads(str(r[Col.METADATA]))["deployment"] for r in rows]
    assert deployments == ["no-features"] * 3 + ["base"] * 3 + ["kvcache"] * 3
    # the same rate under three deployments: told apart only by the metadata column
    assert any("differ only in their --metadata" in w for w in first[Col.WARNINGS])  # type: ignore[union-attr]
    # line 9: kvcache at "inf": 52187.29884683046 tok/s over 4 GPUs
    assert rows[8][Col.TPUT_PER_GPU] == pytest.approx(52187.29884683046 / 4)


def test_metadata_file_with_failed_requests_keeps_them_with_a_warning() -> None:
    rows = _rows(LLMD_OLD)
    assert len(rows) == 7
    pd = rows[6]  # deployment=pd-nixl, 527 of 900 completed at 30 req/s
    assert json.loads(str(pd[Col.METADATA]))["deployment"] == "pd-nixl"
    assert pd[Col.REQUEST_RATE] == 30.0
    assert pd[Col.ERROR_RATE] == pytest.approx((900 - 527) / 900)
    assert "373 of 900 requests failed (bench_serving rejects >5%)" in pd[Col.WARNINGS]  # type: ignore[operator]


def test_appended_sweep_with_framework_metadata_and_no_gpu_count() -> None:
    rows = _rows(SWEEP_FW)
    assert len(rows) == 12  # vllm and sgl, each at 1, 10, 20, 30, 35 req/s and inf
    assert [r[Col.FRAMEWORK] for r in rows] == ["vllm"] * 6 + ["sgl"] * 6  # --metadata framework=
    assert [r[Col.REQUEST_RATE] for r in rows] == [1.0, 10.0, 20.0, 30.0, 35.0, math.inf] * 2
    first, inf = rows[0], rows[5]
    assert json.loads(str(first[Col.METADATA])) == {"framework": "vllm"}
    # no GPU count anywhere: the point is kept with its totals, no per-GPU rate
    assert first[Col.NUM_GPUS] is None and first[Col.TPUT_PER_GPU] is None
    assert first[Col.TOTAL_TPUT] == pytest.approx(1328.9106660709733)
    assert first[Col.OUTPUT_TPUT] == pytest.approx(120.81006055190667)
    assert any("GPU count unknown" in w for w in first[Col.WARNINGS])  # type: ignore[union-attr]
    # median_ttft_ms 44.61679351516068; 1000 / median_tpot_ms 8.699537227823955 = 114.95
    assert first[Col.MEDIAN_TTFT] == pytest.approx(0.04461679351516068)
    assert first[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 8.699537227823955)
    # rate inf: 1015 of 2000 completed
    assert (inf[Col.NUM_REQUESTS_TOTAL], inf[Col.NUM_REQUESTS_SUCCESSFUL]) == (2000, 1015)
    assert "985 of 2000 requests failed (bench_serving rejects >5%)" in inf[Col.WARNINGS]  # type: ignore[operator]
    assert len(_rows(SWEEP_FW_OLD)) == 12


def test_a_bad_document_is_rejected_by_its_line_and_the_others_kept() -> None:
    lines = (FIXTURES / LLMD).read_bytes().splitlines(keepends=True)
    bad = json.loads(lines[1])
    bad["completed"] = 0
    lines[1] = json.dumps(bad).encode() + b"\n"
    src = source(LLMD, b"".join(lines))
    doc = parse_json(src)
    assert isinstance(doc, JsonDocs) and doc.lines[1] == 2
    res = MS.read(src, doc)
    assert len(res.points) == 8
    assert [(r.field, r.row) for r in res.rejects] == [("completed", "line 2")]


# ---- vllm bench serve (newer): failed, request_goodput, max_concurrency with rate "inf" -------


def test_bench_serve_sweep_run_concurrency_and_sweep_parameters_as_metadata() -> None:
    row = _one(SWEEP_RUN0)
    # max_concurrency 2 with request_rate "inf": the load is the concurrency alone
    assert row[Col.CONC] == 2 and row[Col.REQUEST_RATE] is None
    assert row[Col.TOTAL_TPUT] == pytest.approx(281.2430388914002)
    assert row[Col.OUTPUT_TPUT] == pytest.approx(93.74767963046673)
    assert row[Col.INPUT_TPUT] == pytest.approx(281.2430388914002 - 93.74767963046673)
    assert row[Col.MEDIAN_TTFT] == pytest.approx(0.04492285849846667)  # 44.92285849846667 ms
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 8.323490332986694)
    assert row[Col.P99_E2EL] == pytest.approx(0.8768009717071254)  # 876.8009717071254 ms
    assert (row[Col.NUM_REQUESTS_TOTAL], row[Col.NUM_REQUESTS_SUCCESSFUL]) == (8, 8)
    # `vllm bench sweep serve` merges its parameters into the result
    assert json.loads(str(row[Col.METADATA])) == {"run_number": 0, "max_num_seqs": 4}


def test_bench_serve_result_with_sorted_keys() -> None:
    row = _one(NEW)
    assert row[Col.CONC] == 2 and row[Col.REQUEST_RATE] is None
    assert row[Col.TOTAL_TPUT] == pytest.approx(248.6789122211242)
    assert row[Col.MEDIAN_TTFT] == pytest.approx(0.05568139649994919)
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 11.20450286665194)
    assert row[Col.METADATA] is None  # endpoint_type, failed, rtfx, ... are vLLM's own keys


def test_bench_serve_spec_decode_keys() -> None:
    row = _one(SPEC)
    assert row[Col.CONC] == 2
    # 1 + accepted / drafts = 1 + 2723 / 1260 = 3.1611
    assert row[Col.AL_MEASURED] == pytest.approx(1 + 2723 / 1260)
    # 72.03703703703704 % = 2723 / 3780
    assert row[Col.DRAFT_ACCEPTANCE_RATE] == pytest.approx(2723 / 3780)
    assert row[Col.ACCEPT_RATE_PER_POS] == pytest.approx(
        [0.85, 0.7166666666666667, 0.5944444444444444]
    )
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 14.416801156354207)


# ---- the --metadata rules on real bytes under other names -------------------------------------


def test_metadata_gpu_count_wins_over_the_file_name_with_a_warning() -> None:
    data = (FIXTURES / LLMD).read_bytes().splitlines()[0]
    src = SourceFile(Path("x"), "runs/2xH100-80GB-SXM/llama_tp2_run.json", "runs", data)
    row = norm(src, MS.read(src, parse_json(src)).points[0])
    assert (row[Col.NUM_GPUS], row[Col.HW_LABEL]) == (4, "NVIDIA_L40S")
    warnings = row[Col.WARNINGS]
    assert isinstance(warnings, list)
    assert any("the JSON says 4 GPUs (gpu=4xNVIDIA_L40S)" in w and "says 2" in w for w in warnings)


def test_metadata_tp_string_and_non_numeric_tp_is_refused() -> None:
    doc = json.loads((FIXTURES / SWEEP_RUN0).read_bytes())
    src = SourceFile(Path("x"), "run.json", "x", b"{}")
    row = norm(src, MS.read(src, {**doc, "tp": "8", "pp": "2"}).points[0])
    assert (row[Col.TP], row[Col.PP], row[Col.NUM_GPUS]) == (8, 2, 16)
    assert row[Col.TPUT_PER_GPU] == pytest.approx(281.2430388914002 / 16)
    with pytest.raises(ParseError, match="expected a positive integer"):
        MS.read(src, {**doc, "tp": "eight"})


def test_request_rate_is_never_conc_required() -> None:
    doc = json.loads((FIXTURES / SWEEP_RUN0).read_bytes())
    src = SourceFile(Path("x"), "run.json", "x", b"{}")
    row = norm(src, MS.read(src, {**doc, "max_concurrency": None, "request_rate": 4.0}).points[0])
    assert (row[Col.CONC], row[Col.REQUEST_RATE]) == (None, 4.0)
    # a finite rate is kept beside a concurrency cap
    row = norm(src, MS.read(src, {**doc, "request_rate": 4.0}).points[0])
    assert (row[Col.CONC], row[Col.REQUEST_RATE]) == (2, 4.0)
    with pytest.raises(ParseError, match="request_rate"):
        MS.read(src, {**doc, "request_rate": "fast"})


# ---- end to end ---------------------------------------------------------------------------------


def test_pipeline_ingests_every_wild_file(tmp_path: Path) -> None:
    st = Store(tmp_path / "s")
    rep = ingest_paths([FIXTURES / WILD], st, run_id="wild")
    # 9 + 7 (llm-d) + 12 + 12 (sweeps) + 1 (2024) + 2 (sweep runs) + 1 + 1 (spec) = 45 documents
    assert rep.accepted == 45
    assert rep.rejected == []
    points = st.points(["wild"])
    assert points.height == 45
    by_file = points.group_by(str(Col.SOURCE_PATH)).len()
    counts = {str(p).rsplit("/", 2)[-2]: n for p, n in by_file.iter_rows()}
    assert counts["13ee6ea"] == 9 and counts["f747824"] == 12
    old = points.filter(points[str(Col.SOURCE_PATH)].str.ends_with("_tp1_len2000.json"))
    assert old[str(Col.REQUEST_RATE)].to_list() == [math.inf]
    assert old[str(Col.TPUT_PER_GPU)].to_list() == pytest.approx([386.84070079041837])


def test_metadata_only_twins_get_distinct_point_ids(tmp_path: Path) -> None:
    st = Store(tmp_path / "s")
    ingest_paths([FIXTURES / LLMD], st, run_id="wild")
    assert st.points(["wild"])[str(Col.POINT_ID)].n_unique() == 9
