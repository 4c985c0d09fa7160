"""`vllm bench sweep serve` trees: one point per parameter combination, the repeats averaged.

Real trees (tests/fixtures/wild/vllm_bench_sweep/PROVENANCE.md): a TPU v6e serve-parameter sweep
of Qwen3-32B at request rate 16 (4 combinations x 3 runs, overrides in each run JSON), and an
H100 gpt-oss-120b concurrency sweep written by an older vLLM (9 bench-only combinations x 3 runs,
no overrides in the run JSON, a sweep-wide summary.csv beside them).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.readers.vllm_sweep import parse_part, split_name
from ingest.report import IngestReport
from ingest.store import Store

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "vllm_bench_sweep"
TPU = WILD / "tpu_v6e_qwen3_32b"
FMMS = WILD / "fmms_gpt_oss_120b"
FMMS_EXP = FMMS / "gpt-oss-120b" / "baseline" / "20260211_140427"
TPU_128 = (
    "SERVE--gpu_memory_utilization=0.9-max_num_seqs=128-max_num_batched_tokens=2048-"
    "max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-"
    "input_len=1000-output_len=100"
)
FMMS_C1 = "BENCH--max_concurrency=1-num_prompts=10-request_rate=1"


def _ingest(tree: Path, tmp_path: Path) -> tuple[IngestReport, pl.DataFrame]:
    store = Store(tmp_path / "store")
    report = ingest_paths([tree], store, run_id="sweep")
    return report, store.points(["sweep"])


def _row(points: pl.DataFrame, combination: str) -> dict[str, Any]:
    rows = points.filter(pl.col(Col.SOURCE_PATH).str.contains(combination, literal=True))
    assert rows.height == 1
    return rows.row(0, named=True)


def test_serve_parameter_sweep_is_one_point_per_combination(tmp_path: Path) -> None:
    report, points = _ingest(TPU, tmp_path)
    assert report.rejected == []
    assert points.height == 4  # 4 serve combinations x 1 bench combination
    assert points[Col.POINT_ID].n_unique() == 4
    assert set(points[Col.SCHEMA_VARIANT]) == {"vllm_bench_sweep"}
    # run=1.json, run=2.json and summary.json are joined to their combination's point.
    aux = {o.path.rsplit("/", 1)[-1] for o in report.auxiliary}
    assert aux == {"run=1.json", "run=2.json", "summary.json"}
    assert len(report.auxiliary) == 12
    p = _row(points, TPU_128)
    assert p[Col.SOURCE_PATH] == f"results/{TPU_128}/run=0.json"
    # output_throughput of run=0/1/2: 1257.4904536167885, 1289.6181057051656, 1285.4092252904006
    # -> (1257.4904536167885 + 1289.6181057051656 + 1285.4092252904006) / 3 = 1277.5059282041182
    assert p[Col.OUTPUT_TPUT] == pytest.approx(1277.5059282041182, rel=1e-12)
    # total_token_throughput: 13832.394989784674, 14185.799162756823, 14139.501478194408
    # -> mean 14052.565210245302, spread (14185.7992 - 13832.3950) / 14052.5652 = 0.0251487
    assert p[Col.TOTAL_TPUT] == pytest.approx(14052.565210245302, rel=1e-12)
    assert p[Col.REPEATS] == 3
    assert p[Col.REPEAT_SPREAD] == pytest.approx(353.404172972149 / 14052.565210245302)
    # Request-rate sweep (max_concurrency null in every run): the load is the rate.
    assert p[Col.CONC] is None and p[Col.REQUEST_RATE] == 16.0
    assert (p[Col.ISL], p[Col.OSL]) == (1000, 100)
    assert p[Col.MODEL] == "Qwen/Qwen3-32B" and p[Col.FRAMEWORK] == "vllm"
    # median_ttft_ms 165.97390900096798, 51.685689999430906, 52.93184000038309 -> mean in s
    assert p[Col.MEDIAN_TTFT] == pytest.approx(
        (165.97390900096798 + 51.685689999430906 + 52.93184000038309) / 3 / 1000
    )
    assert json.loads(p[Col.SERVER_FLAGS]) == {
        "gpu-memory-utilization": 0.9,
        "max-num-seqs": 128,
        "max-num-batched-tokens": 2048,
        "max-model-len": 4096,
    }
    meta = json.loads(p[Col.METADATA])
    assert meta["sweep_serve"] == {
        "gpu_memory_utilization": 0.9,
        "max_num_seqs": 128,
        "max_num_batched_tokens": 2048,
        "max_model_len": 4096,
    }
    assert meta["sweep_bench"] == {
        "num_prompts": 100,
        "request_rate": 16,
        "dataset_name": "random",
        "input_len": 1000,
        "output_len": 100,
    }
    assert meta["summary_json"] == "agrees"
    assert [r["run"] for r in meta["runs"]] == [0, 1, 2]
    assert meta["runs"][1] == {
        "run": 1,
        "total_tput": 14185.799162756823,
        "output_tput": 1289.6181057051656,
        "median_ttft_s": pytest.approx(0.051685689999430906),
        "median_tpot_s": pytest.approx(0.015714528237386005),
    }
    # The serve flags tell the combinations apart.
    seqs = sorted(json.loads(f)["max-num-seqs"] for f in points[Col.SERVER_FLAGS])
    assert seqs == [128, 128, 256, 256]


def test_concurrency_sweep_of_an_older_vllm(tmp_path: Path) -> None:
    report, points = _ingest(FMMS, tmp_path)
    assert report.rejected == []
    assert points.height == 9
    assert points[Col.POINT_ID].n_unique() == 9
    assert sorted(points[Col.CONC]) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    # The load coordinate is conc; request_rate stays in the bench parameters only.
    assert points[Col.REQUEST_RATE].null_count() == 9
    assert set(points[Col.REPEATS]) == {3}
    ignored = {i.path: i.reason for i in report.ignored}
    csv = "gpt-oss-120b/baseline/20260211_140427/summary.csv"
    assert "run=N.json files are read instead" in ignored[csv]
    p = _row(points, FMMS_C1)
    # output_throughput: 158.6126946314665, 158.78062787338607, 158.78339066497693
    # -> (158.6126946314665 + 158.78062787338607 + 158.78339066497693) / 3 = 158.72557105660982
    assert p[Col.OUTPUT_TPUT] == pytest.approx(158.72557105660982, rel=1e-12)
    # total: 232.59064673692393, 232.83690509245756, 232.84095646731384 (mean 232.7561694322318)
    assert p[Col.REPEAT_SPREAD] == pytest.approx(
        (232.84095646731384 - 232.59064673692393) / 232.7561694322318
    )
    assert p[Col.SERVER_FLAGS] is None  # no --serve-params: nothing of the server is known
    meta = json.loads(p[Col.METADATA])
    assert meta["sweep_serve"] == {}
    assert meta["sweep_bench"] == {"max_concurrency": 1, "num_prompts": 10, "request_rate": 1}


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_serve_topology_from_the_name(tmp_path: Path) -> None:
    name = "SERVE--tensor_parallel_size=8-enable_expert_parallel=True-BENCH--max_concurrency=1"
    _copy(FMMS_EXP / FMMS_C1, tmp_path / "tree" / name)
    _report, points = _ingest(tmp_path / "tree", tmp_path)
    p = points.row(0, named=True)
    assert (p[Col.TP], p[Col.EP], p[Col.CONC]) == (8, 8, 1)
    assert p[Col.TPUT_PER_GPU] == pytest.approx(232.7561694322318 / 8)
    assert json.loads(p[Col.SERVER_FLAGS]) == {
        "tensor-parallel-size": 8,
        "enable-expert-parallel": True,
    }


def test_runs_of_different_models_are_refused_together(tmp_path: Path) -> None:
    combo = _copy(FMMS_EXP / FMMS_C1, tmp_path / "tree" / FMMS_C1)
    run1 = combo / "run=1.json"
    run1.write_text(run1.read_text().replace('"openai/gpt-oss-120b"', '"openai/gpt-oss-20b"'))
    report, points = _ingest(tmp_path / "tree", tmp_path)
    assert points.height == 0  # never a point per run
    assert [(r.path, r.field, r.reader) for r in report.rejected] == [
        (f"{FMMS_C1}/run=1.json", "model_id", "vllm_bench_sweep")
    ]
    assert "openai/gpt-oss-20b" in report.rejected[0].reason


def test_a_failed_run_refuses_the_combination(tmp_path: Path) -> None:
    combo = _copy(FMMS_EXP / FMMS_C1, tmp_path / "tree" / FMMS_C1)
    (combo / "run=2.json").write_text('{"completed": 0, "num_prompts": 10}')
    report, points = _ingest(tmp_path / "tree", tmp_path)
    assert points.height == 0
    assert [(r.path, r.field) for r in report.rejected] == [(f"{FMMS_C1}/run=2.json", "completed")]


def test_a_stale_summary_is_warned(tmp_path: Path) -> None:
    combo = _copy(FMMS_EXP / FMMS_C1, tmp_path / "tree" / FMMS_C1)
    (combo / "summary.json").write_text("[]")
    _report, points = _ingest(tmp_path / "tree", tmp_path)
    p = points.row(0, named=True)
    assert json.loads(p[Col.METADATA])["summary_json"] == "differs"
    assert any("summary.json" in w for w in p[Col.WARNINGS])


def test_combination_names() -> None:
    assert split_name(TPU_128) == (
        "gpu_memory_utilization=0.9-max_num_seqs=128-max_num_batched_tokens=2048-max_model_len=4096",
        "num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100",
    )
    assert split_name(FMMS_C1) == ("", "max_concurrency=1-num_prompts=10-request_rate=1")
    assert split_name("SERVE--tp1") == ("tp1", "")
    assert split_name("20260211_140427") is None
    # A value with '-' (a model path, '/' written as '_') and a negative number stay whole.
    assert parse_part("model=meta-llama_Llama-3.1-8B-top_k=-1-temperature=0.6", {}) == {
        "model": "meta-llama_Llama-3.1-8B",
        "top_k": -1,
        "temperature": 0.6,
    }
    # A dashed key the run JSON carries starts a new parameter; its typed value is used.
    assert parse_part("max-num-seqs=8-max-model-len=4096", {"max-model-len": 4096}) == {
        "max-num-seqs": 8,
        "max-model-len": 4096,
    }
    assert parse_part("bf16-tok2048-seq16-c4", {}) == {"_benchmark_name": "bf16-tok2048-seq16-c4"}


def test_an_infinite_rate_in_the_name(tmp_path: Path) -> None:
    # The TPU runs recorded request_rate 16; renamed to rate inf the name wins for the load.
    name = "SERVE--max_num_seqs=128-BENCH--request_rate=inf"
    _copy(TPU / "results" / TPU_128, tmp_path / "tree" / name)
    _report, points = _ingest(tmp_path / "tree", tmp_path)
    p = points.row(0, named=True)
    assert p[Col.CONC] is None and p[Col.REQUEST_RATE] == float("inf")
    assert json.loads(p[Col.METADATA])["sweep_bench"] == {"request_rate": "inf"}
    assert "request_rate 16.0 in the runs, inf in the name" in p[Col.WARNINGS]
