"""The InferenceX app's JSON table dump: one run per workflow run, points from the result rows.

The fixture (tests/fixtures/wild/inferencex_dump, see its PROVENANCE.md) has two configs, three
workflow_runs rows (run 23000000001 on main; run 23000000002 on a branch, attempts 1 and 2) and
twelve benchmark rows: nine become points, one belongs to the superseded attempt, one failed
(`error`) and one names a config that is not in configs.json.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from analysis.comparison.baseline import baseline_sources, latest_main_baseline
from ingest.contract.col import Col
from ingest.contract.schema import RejectCol, RunCol
from ingest.pipeline import ingest_paths
from ingest.report import IngestReport
from ingest.sources.dump import aggregate_row, ingest_dump, is_dump_dir
from ingest.store import Store
from paretolens.cli import app

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DUMP = FIXTURES / "wild/inferencex_dump"
KIMI_AGG = FIXTURES / "inferencex/agg_fixed_seq"
MAIN, PR = "23000000001", "23000000002"


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, IngestReport]:
    store = Store(tmp_path_factory.mktemp("dump-store"))
    return store, ingest_dump(DUMP, store)


def test_recognised_by_its_tables() -> None:
    assert is_dump_dir(DUMP)
    assert not is_dump_dir(KIMI_AGG)
    assert not is_dump_dir(DUMP / "configs.json")


def test_one_run_per_workflow_run_with_its_catalog_fields(
    ingested: tuple[Store, IngestReport],
) -> None:
    store, report = ingested
    assert sorted(report.runs) == [MAIN, PR]
    assert report.accepted == 9 and report.duplicates == 0
    runs = {r[RunCol.RUN_ID]: r for r in store.runs().to_dicts()}
    main, pr = runs[MAIN], runs[PR]
    assert (main[RunCol.BRANCH], main[RunCol.HEAD_SHA]) == ("main", "1" * 40)
    assert main[RunCol.CREATED_AT] == "2026-03-14T06:00:00.000Z"
    assert (main[RunCol.SOURCE], main[RunCol.REPO]) == (
        "inferencex-dump",
        "SemiAnalysisAI/InferenceX",
    )
    assert (main[RunCol.TITLE], main[RunCol.CONCLUSION]) == ("Run Sweep (fixture)", "success")
    assert (main[RunCol.POINT_COUNT], main[RunCol.REJECT_COUNT]) == (5, 0)
    # the branch run is its latest attempt (2): its url, its conclusion
    assert (pr[RunCol.BRANCH], pr[RunCol.HEAD_SHA]) == ("pr/fixture-branch", "2" * 40)
    assert pr[RunCol.HTML_URL].endswith("/actions/runs/23000000002/attempts/2")
    assert pr[RunCol.CONCLUSION] == "success"
    assert (pr[RunCol.POINT_COUNT], pr[RunCol.REJECT_COUNT]) == (4, 2)


def _point(store: Store, run: str, source: str) -> dict[str, Any]:
    (got,) = store.points([run]).filter(pl.col(Col.SOURCE_PATH) == source).to_dicts()
    return got


def test_points_take_identity_from_configs_and_metrics_in_seconds(
    ingested: tuple[Store, IngestReport],
) -> None:
    store, _ = ingested
    # benchmark row 5008: GLM-4.7 BF16 on gaudi3, vllm-gaudi TP8, 1k/1k, conc 8 (metrics of the
    # InferenceX-app supplemental row, seconds): p99_ttft 0.86877 s, median_tpot 0.06027 s
    glm = _point(store, MAIN, "benchmark_results/5008.json")
    assert (glm[Col.HW], glm[Col.MODEL_PREFIX], glm[Col.MODEL]) == ("gaudi3", "glm4.7", None)
    assert (glm[Col.FRAMEWORK], glm[Col.PRECISION], glm[Col.SPEC_DECODING]) == (
        "vllm-gaudi",
        "bf16",
        "none",
    )
    assert (glm[Col.TP], glm[Col.EP], glm[Col.DP_ATTENTION], glm[Col.PREFILL_TP]) == (
        8,
        1,
        False,
        None,
    )
    assert (glm[Col.ISL], glm[Col.OSL], glm[Col.CONC], glm[Col.NUM_GPUS]) == (1024, 1024, 8, 8)
    assert (glm[Col.TPUT_PER_GPU], glm[Col.MEDIAN_INTVTY]) == (37.53, 16.59)
    assert (glm[Col.P99_TTFT], glm[Col.MEDIAN_TPOT]) == (0.86877, 0.06027)
    assert glm[Col.ARM_LABEL] == "TP8 EP1 | no spec | kv none"
    # benchmark row 5164: Kimi-K2.5 INT4 MTP on mi355x, 8k/1k, conc 64, with its image
    kimi = _point(store, PR, "benchmark_results/5164.json")
    assert (kimi[Col.MODEL_PREFIX], kimi[Col.SPEC_DECODING], kimi[Col.ISL]) == (
        "kimik2.5",
        "mtp",
        8192,
    )
    assert kimi[Col.IMAGE] == "vllm/vllm-openai-rocm:v0.21.0"
    assert round(kimi[Col.TPUT_PER_GPU], 6) == 234.474626
    assert round(kimi[Col.MEDIAN_INTVTY], 6) == 3.314949
    assert round(kimi[Col.P99_TTFT], 6) == 25.79388  # seconds, as the dump keeps them
    concs = store.points([MAIN]).filter(pl.col(Col.MODEL_PREFIX) == "glm4.7")
    assert sorted(concs.get_column(Col.CONC).to_list()) == [1, 2, 4, 8]


def test_every_row_not_taken_is_reported_and_stored(ingested: tuple[Store, IngestReport]) -> None:
    store, report = ingested
    assert {(r.run_id, r.path, r.field) for r in report.rejected} == {
        (PR, "benchmark_results.json#id=5200", "error"),
        (PR, "benchmark_results.json#id=5201", "config_id"),
    }
    ignored = {i.path: i.reason for i in report.ignored}
    assert "superseded by attempt 2" in ignored["benchmark_results.json#id=5020"]
    assert (
        "eval_results.json" not in ignored
    )  # read into the evals table (tests/ingest/readers/test_evals.py)
    # the superseded attempt's conc 128 is not a point
    assert 128 not in store.points([PR]).get_column(Col.CONC).to_list()
    stored = store.rejects([PR]).select(RejectCol.PATH, RejectCol.OUTCOME).sort(RejectCol.PATH)
    assert stored.rows() == [
        ("benchmark_results.json#id=5020", "ignored"),
        ("benchmark_results.json#id=5200", "rejected"),
        ("benchmark_results.json#id=5201", "rejected"),
    ]


def test_ingesting_the_same_dump_again_stores_nothing_new(tmp_path: Path) -> None:
    store = Store(tmp_path)
    ingest_dump(DUMP, store)
    again = ingest_dump(DUMP, store)
    assert (again.accepted, again.duplicates) == (0, 9)
    assert store.points().height == 9 and store.rejects().height == 3


def test_cli_ingest_routes_a_dump_directory(tmp_path: Path) -> None:
    got = CliRunner().invoke(app, ["ingest", str(DUMP), "--store", str(tmp_path), "--json"])
    assert got.exit_code == 1, got.output  # two rows were rejected
    doc = json.loads(got.stdout)
    assert sorted(doc["runs"]) == [MAIN, PR] and doc["accepted"] == 9
    bad = CliRunner().invoke(app, ["ingest", str(DUMP), "--store", str(tmp_path), "--run-id", "x"])
    assert bad.exit_code == 2


def test_a_dump_main_run_is_the_baseline_of_an_artifact_run(tmp_path: Path) -> None:
    # The same Kimi-K2.5 1k/1k conc 4 row, once from the dump (main, model key only) and once
    # from its InferenceX aggregate file (a PR run, served model named): one configuration.
    store = Store(tmp_path)
    ingest_dump(DUMP, store)
    ingest_paths([KIMI_AGG], store, run_id="pr-kimi", run_meta={RunCol.BRANCH.value: "feat"})
    points = store.points()
    base = latest_main_baseline(points, store.runs(), "pr-kimi")
    src = baseline_sources(points, base).select(Col.ISL, Col.CONC, "source_run").rows()
    assert src == [(1024, 4, MAIN)]  # 8k/1k conc 32/64 are only on the branch run: no baseline
    (b,) = base.to_dicts()
    assert round(b[Col.TPUT_PER_GPU], 9) == round(55.62670336516291, 9)


def test_multinode_disagg_config_gives_the_split_shape(tmp_path: Path) -> None:
    # Synthetic config (the fixture has single-node configs only): 2 prefill workers of TP8/EP8
    # and 4 decode workers, 16 + 32 GPUs.
    config = {
        "id": 3, "hardware": "mi355x", "framework": "mori-sglang", "model": "dsr1",
        "precision": "fp8", "spec_method": "none", "disagg": True, "is_multinode": True,
        "prefill_tp": 8, "prefill_ep": 8, "prefill_dp_attention": False, "prefill_num_workers": 2,
        "decode_tp": 8, "decode_ep": 8, "decode_dp_attention": True, "decode_num_workers": 4,
        "num_prefill_gpu": 16, "num_decode_gpu": 32,
    }  # fmt: skip
    result = {"isl": 8192, "osl": 1024, "conc": 512, "metrics": {"tput_per_gpu": 1000.0}}
    row = aggregate_row(config, result)
    assert "tp" not in row and (row["prefill_num_workers"], row["num_decode_gpu"]) == (2, 32)
    assert (row["decode_dp_attention"], row["disagg"], row["is_multinode"]) == (True, True, True)
    dump = tmp_path / "dump"
    shutil.copytree(DUMP, dump)
    (dump / "configs.json").write_text(json.dumps([config]))
    bench = [{"id": "1", "workflow_run_id": "10", "config_id": 3, "date": "2026-03-14", **result}]
    (dump / "benchmark_results.json").write_text(json.dumps(bench))
    store = Store(tmp_path / "s")
    ingest_dump(dump, store)
    (p,) = store.points([MAIN]).to_dicts()
    assert (p[Col.PREFILL_TP], p[Col.DECODE_NUM_WORKERS], p[Col.NUM_GPUS]) == (8, 4, 48)
    assert p[Col.TOTAL_TPUT] == 48000.0


def test_dump_tables_inside_a_larger_tree_are_named_not_misread(tmp_path: Path) -> None:
    # Ingested as loose files (e.g. a parent directory), each table is ignored with the hint.
    report = ingest_paths([DUMP], Store(tmp_path), run_id="loose")
    assert report.rejected == [] and report.accepted == 0
    why = {i.path: i.reason for i in report.ignored}
    assert all("InferenceX app JSON dump" in why[f] for f in ("configs.json", "workflow_runs.json"))
    assert "paretolens ingest DUMP_DIR" in why["benchmark_results.json"]
