"""The InferenceX app's `/api/v1/benchmarks` rows: the last 25 rows of the app's own capture
(packages/app/cypress/fixtures/api/benchmarks.json, DeepSeek-R1), two SGLang FP8 B300 TP8
configurations without and with MTP and one TP4 one. Every figure below is copied from the file."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.readers.app_api import AppApiReader
from ingest.readers.registry import file_readers
from tests.ingest.readers._support import (
    check_only_contract_errors,
    load,
    mutated,
    named,
    read_all,
)

READER = AppApiReader()
REL = "wild/inferencex_app_api/benchmarks_dsr1_b300_sglang_fp8.json"
NONE_RUN = "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/24559275898/attempts/1"
MTP_RUN = "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/24562691419/attempts/2"


def test_every_row_of_the_capture_becomes_a_point_of_its_configuration() -> None:
    src, doc = load(REL)
    assert READER.sniff(src, doc)
    res, rows = read_all(READER, src, doc)
    assert res.rejects == [] and res.notes == [] and len(rows) == 25
    arms = {}
    for r in rows:
        key = (r[Col.SPEC_DECODING], r[Col.TP], r[Col.ISL], r[Col.OSL])
        arms.setdefault(key, []).append(r[Col.CONC])
    assert arms == {
        ("none", 8, 1024, 1024): [4, 8, 16, 32, 64],
        ("none", 8, 8192, 1024): [4],
        ("none", 4, 8192, 1024): [4, 8, 16, 32],
        ("mtp", 8, 1024, 1024): [4, 8, 16, 32, 64, 128, 256, 512],
        ("mtp", 8, 8192, 1024): [4, 8, 16, 32, 64, 128, 256],
    }


def test_an_app_row_maps_onto_the_canonical_point() -> None:
    src, doc = load(REL)
    rows = read_all(READER, src, doc)[1]
    # Element 0: no MTP, TP8, 1k/1k, conc 4 ("tput_per_gpu":103.98732762436595,
    # "median_intvty":110.05752677423068, "median_tpot":0.009086157297095868,
    # "p99_ttft":0.7333151338628522, input 52.246665768193296 + output 51.74066185617265).
    first = rows[0]
    assert {
        k: first[k]
        for k in (
            Col.HW,
            Col.MODEL_PREFIX,
            Col.FRAMEWORK,
            Col.PRECISION,
            Col.SPEC_DECODING,
            Col.TP,
            Col.EP,
            Col.DP_ATTENTION,
            Col.NUM_GPUS,
            Col.ISL,
            Col.OSL,
            Col.CONC,
            Col.IMAGE,
            Col.SCHEMA_VARIANT,
            Col.TPUT_PER_GPU,
            Col.OUTPUT_TPUT_PER_GPU,
            Col.INPUT_TPUT_PER_GPU,
            Col.MEDIAN_INTVTY,
            Col.MEDIAN_TPOT,
            Col.P99_TTFT,
        )
    } == {
        Col.HW: "b300",
        Col.MODEL_PREFIX: "dsr1",
        Col.FRAMEWORK: "sglang",
        Col.PRECISION: "fp8",
        Col.SPEC_DECODING: "none",
        Col.TP: 8,
        Col.EP: 1,
        Col.DP_ATTENTION: False,
        Col.NUM_GPUS: 8,
        Col.ISL: 1024,
        Col.OSL: 1024,
        Col.CONC: 4,
        Col.IMAGE: "lmsysorg/sglang:v0.5.10.post1-cu130",
        Col.SCHEMA_VARIANT: "agg_fixed_v1",
        Col.TPUT_PER_GPU: 103.98732762436595,
        Col.OUTPUT_TPUT_PER_GPU: 51.74066185617265,
        Col.INPUT_TPUT_PER_GPU: 52.246665768193296,
        Col.MEDIAN_INTVTY: 110.05752677423068,
        Col.MEDIAN_TPOT: 0.009086157297095868,
        Col.P99_TTFT: 0.7333151338628522,
    }
    assert json.loads(first[Col.METADATA]) == {
        "inferencex_app": {"date": "2026-04-17", "run_url": NONE_RUN}
    }
    # Element 10: MTP, TP8, 1k/1k, conc 4 ("tput_per_gpu":145.21642609801984,
    # "median_intvty":155.8323211383904), from the other workflow run.
    mtp = rows[10]
    assert (mtp[Col.SPEC_DECODING], mtp[Col.CONC], mtp[Col.TPUT_PER_GPU]) == (
        "mtp",
        4,
        145.21642609801984,
    )
    assert mtp[Col.MEDIAN_INTVTY] == 155.8323211383904
    assert json.loads(mtp[Col.METADATA])["inferencex_app"]["run_url"] == MTP_RUN
    # The run of a point never splits its arm: the MTP and no-MTP arms are one arm each.
    assert len({r[Col.ARM_ID] for r in rows if r[Col.ISL] == 1024}) == 2


def _damaged() -> list[Any]:
    doc = load(REL)[1]
    no_tput = copy.deepcopy(doc[1])
    del no_tput["metrics"]["tput_per_gpu"]
    no_hw = {**copy.deepcopy(doc[2]), "hardware": ""}
    bad_conc = {**copy.deepcopy(doc[3]), "conc": -4}
    # A table dump's benchmark_results row: a config_id instead of the configuration's fields.
    dump_row = {"id": "5001", "config_id": "2", "conc": 4, "metrics": doc[0]["metrics"]}
    return [doc[0], no_tput, no_hw, bad_conc, dump_row, copy.deepcopy(doc[0])]


def test_bad_elements_are_rejected_by_index_and_the_rest_kept() -> None:
    src = named("api/benchmarks.json")
    res, rows = read_all(READER, src, _damaged())
    assert [r[Col.CONC] for r in rows] == [4]
    assert [(r.row, r.field) for r in res.rejects] == [
        ("1", "metrics.tput_per_gpu"),
        ("2", "hardware"),
        ("3", "conc"),
        ("4", ""),
    ]
    assert res.rejects[1].reason == "expected the hardware key (a non-empty string), got ''"
    assert res.rejects[3].reason.startswith(
        "inferencex_app_api: expected a benchmark row (hardware, framework, model, precision, "
        "spec_method, conc, prefill_tp, metrics); keys found: conc, config_id, id, metrics"
    )
    assert res.notes == ["element 5 repeats element 0; kept once"]


def test_the_registry_picks_this_reader_for_the_capture_and_not_for_a_dump_table() -> None:
    src, doc = load(REL)
    # `auxiliary`, the fallback last in the registry, names any file no format reader took.
    claims = [r.name for r in file_readers() if r.sniff(src, doc)]
    assert claims == ["inferencex_app_api", "auxiliary"]
    dump_src, dump_doc = load("wild/inferencex_dump/benchmark_results.json")
    assert not READER.sniff(dump_src, dump_doc)
    configs_src, configs_doc = load("wild/inferencex_dump/configs.json")
    assert not READER.sniff(configs_src, configs_doc)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_rows_raise_only_contract_errors(data: st.DataObject) -> None:
    # Three real rows (no MTP 1k/1k conc 4, TP4 8k/1k conc 4, MTP 1k/1k conc 4) with random damage.
    doc = load(REL)[1]
    check_only_contract_errors(READER, named(REL), data.draw(mutated([doc[0], doc[6], doc[10]])))
