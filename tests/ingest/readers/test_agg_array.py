"""results_bmk/agg_bmk.json: arrays mixing fixed-sequence and agentic rows."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers.agg_array import AggArrayReader
from tests.ingest.readers._support import (
    check_only_contract_errors,
    doc_of,
    mutated,
    named,
    norm,
)

ARRAY = AggArrayReader()
AGG = "inferencex/agg_fixed_seq/agg_kimik2.5_{}_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc{}_MI355-gbt350-odcdh5-wbb3.json"
V3 = "inferencex/agentic_agg/kimik2.7_tp8_sweep_29337493492/kimik2.7_tp8_conc16_kvdram-lmcache_fp4_vllm_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_mi355x-amds_01.json"
FLAT = "inferencex/agentic_agg/dsr1_b200_multiturn_pareto_input/agg_dsr1_tp4_users128_offloadon_fp4_vllm_tp4-ep4-dpafalse_disagg-false_spec-none_conc128_b200-dgxc-slurm_5.json"
SRC = named("results_bmk/agg_bmk.json")


def _collected() -> list[Any]:
    """What collect_results.py builds from these real rows, plus the damage a real array can carry."""
    conc4 = doc_of(AGG.format("1k1k", 4))
    retry = {**copy.deepcopy(conc4), "tput_per_gpu": 54.0}
    bad_v3 = {**doc_of(V3), "dp_attention": "maybe"}
    return [
        conc4,
        doc_of(V3),
        doc_of(FLAT),
        "not a row",
        {**doc_of(AGG.format("8k1k", 32)), "median_tpot": 0.0},
        copy.deepcopy(conc4),  # the same artifact collected twice
        retry,  # a retried job: same configuration and conc, other numbers
        bad_v3,
        doc_of(AGG.format("8k1k", 64)),
        {"hw": "h200", "note": "unrelated"},
    ]


def test_mixed_array_keeps_good_rows_and_rejects_the_rest_by_index() -> None:
    doc = _collected()
    assert ARRAY.sniff(SRC, doc)
    res = ARRAY.read(SRC, doc)
    rows = [norm(SRC, p) for p in res.points]
    assert [(r[Col.SCHEMA_VARIANT], r[Col.CONC]) for r in rows] == [
        ("agg_fixed_v1", 4),
        ("agentic_v3", 16),
        ("agentic_flat", 128),
        ("agg_fixed_v1", 64),
    ]
    # each row keeps its own reader's arithmetic: v3 per-GPU as published, fixed 1000/tpot_ms
    assert rows[1][Col.TPUT_PER_GPU] == 2884.88854
    assert rows[0][Col.MEDIAN_INTVTY] == pytest.approx(1000 / 17.393898241078155)
    rejected = {r.row: (r.field, r.reason) for r in res.rejects}
    assert sorted(rejected, key=int) == ["3", "4", "6", "7", "9"]
    assert rejected["4"][0] == "median_tpot"  # zero TPOT fails the contract
    assert rejected["7"][0] == "dp_attention"
    assert "element 0 was kept" in rejected["6"][1]
    assert "not a fixed-sequence" in rejected["3"][1]
    assert res.notes == ["element 5 repeats element 0; kept once"]


def test_arrays_without_any_aggregate_row_are_not_claimed() -> None:
    assert not ARRAY.sniff(SRC, [])
    assert not ARRAY.sniff(SRC, [{"hw": "h200"}, 3, "x"])
    assert not ARRAY.sniff(SRC, doc_of(AGG.format("1k1k", 4)))


def test_a_non_array_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        ARRAY.read(SRC, {"not": "an array"})


def test_array_round_trips_through_json() -> None:
    # agg_bmk.json is written with json.dump; reading the serialised array gives the same points.
    doc = json.loads(json.dumps(_collected()))
    assert len(ARRAY.read(SRC, doc).points) == 4


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_arrays_raise_only_contract_errors(data: st.DataObject) -> None:
    check_only_contract_errors(ARRAY, SRC, data.draw(mutated(_collected()[:3])))
