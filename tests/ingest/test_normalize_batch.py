"""`normalize_batch` is `normalize` over a batch: the same frame, point ids and errors (issue: ingest).

The batch path checks types per column and derives and validates with polars expressions; any row
a check flags goes through `normalize`. These tests hold the two paths to the same output on
generated rows, hostile values included, mixed in one batch.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import STATS, Col
from ingest.contract.schema import ARM_KEY, POINTS_SCHEMA, SPECS
from ingest.errors import SchemaError
from ingest.normalize import derive, rules
from ingest.normalize.batch import NOT_FROM_READERS, Batch, normalize_batch
from ingest.normalize.ids import arm_label
from ingest.normalize.row import normalize

NOW = datetime(2026, 12, 1, 12, 0, 0, 123456, tzinfo=UTC)
_SCHEMA = pl.from_arrow(POINTS_SCHEMA.empty_table()).schema  # type: ignore[union-attr]

_HOSTILE = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        -1,
        1,
        2**63,
        -(2**63),
        2**62,
        10**30,
        0.0,
        -0.0,
        -1.5,
        5e-324,
        1e308,
        float("inf"),
        float("-inf"),
        float("nan"),
        "",
        "8",
        "-3",
        "true",
        "x",
        "\ud800",
        "é",
        "a:b-c",
        [],
        [1.0, 2],
        [True],
        ["a", 1],
        ["\ud800"],
        {"k": 1},
    ]
)


def _plausible(col: Col) -> st.SearchStrategy[Any]:
    t = SPECS[col].dtype
    name = str(col)
    if str(t) == "bool":
        return st.booleans()
    if str(t) == "int64":
        return st.integers(0, 16) if name != "conc" else st.integers(-1, 512)
    if str(t) == "double":
        if name.endswith("_tpot"):
            return st.sampled_from([0.02, 0.5, 0.0005, 20.0])
        if name.endswith("_intvty"):
            return st.sampled_from([50.0, 2.0, 2000.0, 0.05])
        return st.one_of(
            st.floats(0, 1e6, allow_nan=False),
            st.sampled_from([1.0, 0.5, 1e-320, 1e300, -2.0]),
            st.integers(0, 1000),
        )
    if str(t) == "string":
        if col in (Col.HW, Col.HW_LABEL):
            return st.sampled_from(["h200", "cluster:H200-dgxc", "mi355x-amd", "", ":", "İ-x"])
        if col in (Col.INTVTY_DEFINITION,):
            return st.sampled_from(["inv_tpot_percentile", "inv_itl_percentile", ""])
        if col in (Col.SCENARIO,):
            return st.sampled_from(["fixed-seq-len", "agentic-coding"])
        if col in (Col.SPEC_DECODING, Col.KV_OFFLOADING):
            return st.sampled_from(["none", "mtp", "dram", "eagle"])
        return st.text(max_size=6)
    if str(t) == "list<item: double>":
        return st.lists(st.floats(0, 1, allow_nan=False), max_size=3)
    if str(t) == "list<item: string>":
        return st.lists(st.text(max_size=4), max_size=2)
    return st.none()


_WRITABLE = [c for c in SPECS if str(c) not in NOT_FROM_READERS]
# The columns the derivations and checks read, so generated rows exercise them often.
_CORE = [
    Col.CONC,
    Col.REQUEST_RATE,
    Col.TP,
    Col.PP,
    Col.PCP_SIZE,
    Col.PREFILL_GPUS,
    Col.DECODE_GPUS,
    Col.NUM_GPUS,
    Col.TOTAL_TPUT,
    Col.TPUT_PER_GPU,
    Col.OUTPUT_TPUT,
    Col.INPUT_TPUT,
    Col.OUTPUT_TPUT_PER_GPU,
    Col.INPUT_TPUT_PER_GPU,
    Col.HW,
    Col.HW_LABEL,
    Col.MEDIAN_TPOT,
    Col.MEDIAN_INTVTY,
    Col.P99_TPOT,
    Col.P99_INTVTY,
    Col.INTVTY_DEFINITION,
    Col.NUM_REQUESTS_TOTAL,
    Col.NUM_REQUESTS_SUCCESSFUL,
    Col.ERROR_RATE,
    Col.SCENARIO,
    Col.SPEC_ACCEPTED_TOKENS,
    Col.SPEC_DRAFTS,
    Col.SPEC_DRAFT_TOKENS,
    Col.WARNINGS,
    Col.ACCEPT_RATE_PER_POS,
    Col.SERVER_FLAGS,
    Col.PREFILL_TP,
    Col.IS_MULTINODE,
    Col.SPEC_DECODING,
    Col.NUM_SPEC_TOKENS,
]


@st.composite
def partial_rows(draw: st.DrawFn) -> dict[str, Any]:
    row: dict[str, Any] = {str(Col.CONC): draw(st.integers(1, 256))}
    row[str(Col.TP)] = draw(st.integers(1, 8))
    row[str(Col.TOTAL_TPUT)] = draw(st.floats(1, 1e5, allow_nan=False))
    cols = draw(st.lists(st.sampled_from(_CORE), max_size=12)) + draw(
        st.lists(st.sampled_from(_WRITABLE), max_size=6)
    )
    for col in cols:
        hostile = draw(st.integers(0, 9)) == 0
        row[str(col)] = draw(_HOSTILE if hostile else _plausible(col))
    for c in [c for c in row if draw(st.integers(0, 7)) == 0]:
        del row[c]
    if draw(st.integers(0, 30)) == 0:
        row[draw(st.sampled_from(["not_a_column", "run_id", "point_id", "ingested_at"]))] = "x"
    if draw(st.booleans()) and str(Col.MEDIAN_TPOT) in row:
        tpot = row[str(Col.MEDIAN_TPOT)]
        if isinstance(tpot, float) and tpot > 0:
            row[str(Col.MEDIAN_INTVTY)] = 1.0 / tpot
    return row


def _reference(rows: list[dict[str, Any]]) -> tuple[pl.DataFrame, list[str | None], dict[int, Any]]:
    out, ids, errors = [], [], {}
    for i, r in enumerate(rows):
        try:
            full = normalize(
                r,
                run_id="run",
                source_path=f"f{i % 3}.json",
                source_sha256=f"s{i}",
                artifact="a",
                ingested_at=NOW,
            )
        except SchemaError as exc:
            errors[i] = (exc.field, exc.reason)
            ids.append(None)
            continue
        out.append(full)
        ids.append(full[str(Col.POINT_ID)])
    frame = pl.DataFrame(out, schema=_SCHEMA, strict=False) if out else pl.DataFrame(schema=_SCHEMA)
    return frame, ids, errors


def _batch(rows: list[dict[str, Any]]) -> Batch:
    return normalize_batch(
        rows,
        run_id="run",
        source_paths=[f"f{i % 3}.json" for i in range(len(rows))],
        source_sha256s=[f"s{i}" for i in range(len(rows))],
        artifacts=["a"] * len(rows),
        ingested_at=NOW,
    )


def _same(rows: list[dict[str, Any]]) -> None:
    try:
        frame, ids, errors = _reference(rows)
    except Exception as exc:  # a value normalize cannot even raise SchemaError for
        with pytest.raises(type(exc)):
            _batch(rows)
        return
    got = _batch(rows)
    assert got.frame.schema == frame.schema
    assert got.frame.equals(frame, null_equal=True), (got.frame, frame)
    assert got.point_ids == ids
    assert {i: (e.field, e.reason) for i, e in got.errors.items()} == errors


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(rows=st.lists(partial_rows(), min_size=1, max_size=12))
def test_the_batch_path_matches_the_row_path(rows: list[dict[str, Any]]) -> None:
    _same(rows)


def test_a_bad_row_is_refused_with_its_reason_and_the_rest_of_the_batch_is_kept() -> None:
    good = {"conc": 4, "tp": 8, "total_tput": 800.0, "median_tpot": 0.02}
    rows = [
        good,
        {**good, "conc": 0},
        {**good, "median_tpot": "fast"},
        {**good, "median_tpot": 20.0, "median_intvty": 50.0},
        {**good, "bogus": 1},
        {**good, "conc": 8},
    ]
    got = _batch(rows)
    assert got.frame.get_column(str(Col.CONC)).to_list() == [4, 8]
    assert [i for i, pid in enumerate(got.point_ids) if pid] == [0, 5]
    assert {i: e.field for i, e in got.errors.items()} == {
        1: "conc",
        2: "median_tpot",
        3: "median_tpot",
        4: "bogus",
    }
    assert got.errors[2].reason == "expected a number, got str 'fast'"
    _same(rows)


def test_derivations_over_a_batch() -> None:
    rows = [
        {
            "conc": 1,
            "tp": 4,
            "pp": 2,
            "total_tput": 800.0,
            "p99_tpot": 0.05,
            "hw_label": "c:H200-x",
        },
        {"conc": 2, "num_prefill_gpu": 2, "num_decode_gpu": 6, "output_tput_per_gpu": 10.0},
        {"conc": 3, "input_tput": 1.0, "output_tput": 2.0, "num_requests_total": 10},
        {"conc": 4, "total_tput": 2.0, "num_requests_total": 10, "num_requests_successful": 9},
    ]
    got = _batch(rows).frame
    assert got.get_column(str(Col.NUM_GPUS)).to_list() == [8, 8, None, None]
    assert got.get_column(str(Col.TPUT_PER_GPU)).to_list()[0] == 100.0
    assert got.get_column(str(Col.OUTPUT_TPUT)).to_list()[1] == 80.0
    assert got.get_column(str(Col.TOTAL_TPUT)).to_list()[2] == 3.0
    assert got.get_column(str(Col.P99_INTVTY)).to_list()[0] == 1 / 0.05
    assert got.get_column(str(Col.HW)).to_list()[0] == "h200"
    assert got.get_column(str(Col.ERROR_RATE)).to_list()[3] == pytest.approx(0.1)
    assert got.get_column(str(Col.WARNINGS)).to_list()[2] is None
    assert got.get_column(str(Col.WARNINGS)).to_list()[3][0].startswith("GPU count unknown")
    _same(rows)


def test_request_rate_points_take_the_batch_path_with_the_row_paths_ids() -> None:
    good = {"tp": 8, "total_tput": 800.0}
    rows = [
        {**good, "request_rate": 2.0},
        {**good, "request_rate": 4.0},
        {**good, "request_rate": float("inf")},
        {**good, "request_rate": 0.0},
        {**good, "request_rate": -1.0, "conc": 4},
        good,
        {**good, "conc": 4, "request_rate": 2.0},
    ]
    got = _batch(rows)
    assert {i: e.field for i, e in got.errors.items()} == {
        3: "request_rate",
        4: "request_rate",
        5: "conc",
    }
    assert len(set(got.frame.get_column(str(Col.ARM_ID)))) == 2
    _same(rows)


def test_a_rule_added_once_is_applied_by_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    rule = rules.Rule(
        (str(Col.ISL),), rules.Over(100_000), "expected at most 100000 tokens, got {value}"
    )
    monkeypatch.setattr(rules, "RULES", (*rules.RULES, rule))
    derive.plan.cache_clear()
    try:
        rows = [
            {"conc": c, "tp": 8, "total_tput": 800.0, "isl": isl}
            for c, isl in ((1, 1024), (2, 200_000))
        ]
        got = _batch(rows)
        assert {i: (e.field, e.reason) for i, e in got.errors.items()} == {
            1: ("isl", "expected at most 100000 tokens, got 200000")
        }
        assert got.frame.get_column(str(Col.CONC)).to_list() == [1]
        _same(rows)
    finally:
        derive.plan.cache_clear()


def test_an_empty_batch() -> None:
    got = _batch([])
    assert got.frame.height == 0 and got.frame.schema == _SCHEMA and got.point_ids == []


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(row=partial_rows(), col=st.sampled_from(list(SPECS)), value=_HOSTILE)
def test_arm_label_reads_only_the_arm_key_and_the_gpu_split(
    row: dict[str, Any], col: Col, value: Any
) -> None:
    # The batch computes one label per distinct (arm key, prefill/decode GPU, load kind) tuple:
    # conc and request_rate say whether the arm is a request-rate sweep.
    if col in (*ARM_KEY, Col.PREFILL_GPUS, Col.DECODE_GPUS, Col.CONC, Col.REQUEST_RATE):
        return
    try:
        before = arm_label(row)
    except TypeError:
        return
    assert arm_label({**row, str(col): value}) == before


def test_every_stat_has_its_tpot_and_intvty_columns() -> None:
    names = {str(c) for c in SPECS}
    assert all(f"{s}_tpot" in names and f"{s}_intvty" in names for s in STATS)
