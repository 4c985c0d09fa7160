"""analyze_points against independent oracles: polars' sort for the row order, moocore for the
frontiers, brute force for the dominators, the polars window rules for the numpy cliff pass."""

from __future__ import annotations

import math
from typing import Any

import moocore
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from analysis.frontier.cliff import CliffParams, arm_cliffs, cliff_frame
from analysis.frontier.codes import dense_codes, gather, key_ranks, nulls_last_key
from analysis.frontier.dominance import nondominated_sorted, order_by
from analysis.frontier.prune import (
    DEFAULT_MAX_DOMINATED_BY,
    Verdict,
    analyze_points,
    invalid_mask,
    invalid_reasons,
)
from ingest.contract.col import Col
from ingest.contract.schema import better
from tests.analysis.pointdata import frame, row

X, Y = Col.MEDIAN_INTVTY, Col.TPUT_PER_GPU
GROUP = (Col.RUN_ID, Col.HW)

# A few levels per axis (ties and duplicates), sometimes unusable values.
_AXIS = st.one_of(
    st.integers(1, 6).map(float), st.sampled_from([None, math.nan, 0.0, -1.0, math.inf])
)
_ROW = st.tuples(
    st.integers(0, 1),  # run
    st.sampled_from(["h1", "h2", None]),  # hw (a group column, nulls included)
    st.integers(0, 3),  # arm
    st.one_of(st.sampled_from([1, 2, 4, 8]), st.none()),  # conc
    _AXIS,  # median_intvty
    _AXIS,  # tput_per_gpu
    st.one_of(st.integers(1, 30).map(float), st.none()),  # p90_ttft
    st.sampled_from([0.0, 0.0, 0.07, 0.2, None]),  # error_rate
    st.sampled_from([5, 5, 0, None]),  # num_requests_successful
    st.booleans(),  # an odd label on this row
)


def _points(rows: list[tuple[Any, ...]]) -> pl.DataFrame:
    cols: dict[str, list[Any]] = {c: [] for c in (
        Col.POINT_ID, Col.RUN_ID, Col.HW, Col.ARM_ID, Col.ARM_LABEL, Col.CONC, X, Y, Col.P90_TTFT,
        Col.ERROR_RATE, Col.NUM_REQUESTS_SUCCESSFUL)}  # fmt: skip
    for i, (run, hw, arm, conc, x, y, ttft, err, ok, odd) in enumerate(rows):
        values = (f"p{i}", f"r{run}", hw, f"a{arm}", "odd" if odd else f"arm {arm}", conc, x, y,
                  ttft, err, ok)  # fmt: skip
        for c, v in zip(cols, values, strict=True):
            cols[c].append(v)
    schema = {Col.CONC: pl.Int64, X: pl.Float64, Y: pl.Float64, Col.P90_TTFT: pl.Float64,
              Col.ERROR_RATE: pl.Float64, Col.NUM_REQUESTS_SUCCESSFUL: pl.Int64}  # fmt: skip
    return pl.DataFrame(cols, schema_overrides=schema)


def _oriented(v: float, metric: str) -> float:
    return v if better(metric) == "higher" else -v


@settings(max_examples=400, deadline=None)
@given(st.lists(_ROW, max_size=40), st.sampled_from([(X, Y), (Col.P90_TTFT, Y)]))
def test_verdicts_order_and_dominators_match_the_oracles(
    rows: list[tuple[Any, ...]], axes: tuple[str, str]
) -> None:
    x, y = axes
    pts = _points(rows)
    a = analyze_points(pts, x=x, y=y, group_by=GROUP, max_dominated_by=None)
    t = a.table
    # order: polars' sort by the group columns, arm label, conc (nulls last), input row
    expected = pts.with_row_index("i").sort([*GROUP, Col.ARM_LABEL, Col.CONC, "i"], nulls_last=True)
    assert t.get_column(Col.POINT_ID).to_list() == expected.get_column(Col.POINT_ID).to_list()
    by_id = {r[Col.POINT_ID]: r for r in t.iter_rows(named=True)}
    reasons = dict(zip(pts[Col.POINT_ID], invalid_reasons(pts, x, y, 0.10), strict=True))
    assert (invalid_mask(pts, x, y, 0.10) == [r is not None for r in reasons.values()]).all()
    judged = []
    for i, r in enumerate(pts.iter_rows(named=True)):
        out = by_id[r[Col.POINT_ID]]
        why = reasons[r[Col.POINT_ID]]
        if why is not None and out["verdict"] == Verdict.POST_CLIFF:
            # A failing error rate past the knee is post-cliff (the load broke the server); only
            # an error-rate reason can be overruled so, with the rate in the evidence.
            assert why.startswith("error rate") and ";" not in why
            assert "error rate" in out["reason"]
        elif why is not None:
            assert (out["verdict"], out["reason"]) == (Verdict.INVALID, why)
        elif out["verdict"] != Verdict.POST_CLIFF:
            judged.append((i, r))
    # frontiers: moocore per group and per arm, on the judged points
    for key in (GROUP, (*GROUP, Col.ARM_ID)):
        sets: dict[tuple[Any, ...], list[tuple[int, dict[str, Any]]]] = {}
        for i, r in judged:
            sets.setdefault(tuple(r[c] for c in key), []).append((i, r))
        for members in sets.values():
            xy = np.array([[r[x], r[y]] for _, r in members])
            keep = moocore.is_nondominated(
                xy, maximise=[better(x) == "higher", better(y) == "higher"], keep_weakly=True
            )
            col = "verdict" if len(key) == len(GROUP) else "on_arm_frontier"
            got = [by_id[r[Col.POINT_ID]][col] for _, r in members]
            want = [(Verdict.FRONTIER if k else Verdict.DOMINATED) if col == "verdict" else bool(k)
                    for k in keep]  # fmt: skip
            assert got == want
    # dominators: the group-frontier points at least as good on both axes, nearest in x first
    front = [(i, r) for i, r in judged if by_id[r[Col.POINT_ID]]["verdict"] == Verdict.FRONTIER]
    for _, r in judged:
        out = by_id[r[Col.POINT_ID]]
        px, py = _oriented(r[x], x), _oriented(r[y], y)
        doms = sorted(
            (_oriented(f[x], x), -_oriented(f[y], y), j, f[Col.POINT_ID])
            for j, f in front
            if all(f[c] == r[c] for c in GROUP)
            and _oriented(f[x], x) >= px
            and _oriented(f[y], y) >= py
            and (f[x], f[y]) != (r[x], r[y])
        )
        ids = [d[-1] for d in doms] if out["verdict"] == Verdict.DOMINATED else []
        assert (out["dominated_by"], out["dominated_by_count"]) == (ids, len(ids))
        if ids and by_id[ids[0]][Col.CONC] is None:  # the nearest has nothing to name it by
            assert out["reason"] == "dominated in its comparison group"
        elif len(ids) > 1:
            assert out["reason"].endswith(f" and {len(ids) - 1} more")
    # the polylines hold exactly the frontier points, x ascending
    on_lines = sorted(p for f in a.group_frontiers for p in f.point_ids)
    assert on_lines == sorted(r[Col.POINT_ID] for _, r in front)
    assert all(list(f.xs) == sorted(f.xs) for f in (*a.group_frontiers, *a.arm_frontiers))


@settings(max_examples=300, deadline=None)
@given(st.lists(_ROW, max_size=40), st.integers(0, 4))
def test_the_cap_keeps_the_nearest_dominators_and_the_count(
    rows: list[tuple[Any, ...]], cap: int
) -> None:
    pts = _points(rows)
    full = analyze_points(pts, group_by=GROUP, max_dominated_by=None).table
    capped = analyze_points(pts, group_by=GROUP, max_dominated_by=cap).table
    assert_frame_equal(full.drop("dominated_by"), capped.drop("dominated_by"))
    assert capped["dominated_by"].to_list() == full["dominated_by"].list.head(cap).to_list()
    assert (full["dominated_by"].list.len() == full["dominated_by_count"]).all()


def _staircase() -> pl.DataFrame:
    # five arms on the frontier (10, 100) ... (50, 60) and one point (5, 50) under all of them
    steps = [(10.0, 100.0), (20.0, 90.0), (30.0, 80.0), (40.0, 70.0), (50.0, 60.0), (5.0, 50.0)]
    return frame(
        row(conc=1, tp=tp, median_intvty=x, tput_per_gpu=y, p90_ttft=1.0, model_prefix="m")
        for tp, (x, y) in enumerate(steps, start=1)
    )


def test_dominated_by_lists_the_nearest_three_and_counts_them_all() -> None:
    t = analyze_points(_staircase()).table
    ids = dict(zip(t[Col.TP], t[Col.POINT_ID], strict=True))
    labels = dict(zip(t[Col.TP], t[Col.ARM_LABEL], strict=True))
    (r,) = t.filter(pl.col(Col.TP) == 6).to_dicts()
    assert DEFAULT_MAX_DOMINATED_BY == 3
    assert (r["verdict"], r["dominated_by"], r["dominated_by_count"]) == (
        "dominated",
        [ids[1], ids[2], ids[3]],
        5,
    )
    assert r["reason"] == f"dominated by {labels[1]} c1 (10.0, 100.0) and 4 more"
    uncapped = analyze_points(_staircase(), max_dominated_by=None).table
    assert uncapped.filter(pl.col(Col.TP) == 6)["dominated_by"].to_list() == [
        [ids[1], ids[2], ids[3], ids[4], ids[5]]
    ]
    # the reason does not depend on the cap
    none = analyze_points(_staircase(), max_dominated_by=0).table.filter(pl.col(Col.TP) == 6)
    assert none.select("dominated_by", "dominated_by_count", "reason").row(0) == (
        [],
        5,
        r["reason"],
    )
    assert t.columns[-4:] == ["reason", "dominated_by", "dominated_by_count", "knee_conc"]


def test_polylines_are_built_on_first_use_and_kept() -> None:
    a = analyze_points(_staircase())
    assert "_frontiers" not in vars(a)  # the table alone does not build them
    arms = a.arm_frontiers
    assert a.arm_frontiers is arms and len(arms) == 6
    ((x_lo, x_hi),) = [(f.xs[0], f.xs[-1]) for f in a.group_frontiers]
    assert (x_lo, x_hi) == (10.0, 50.0)


def test_input_split_in_chunks_gives_the_same_table() -> None:
    pts = _staircase()
    chunked = pl.concat([pts[:2], pts[2:4], pts[4:]], rechunk=False)
    assert chunked.n_chunks() == 3
    assert_frame_equal(analyze_points(chunked).table, analyze_points(pts).table)


# ---- the cliff rules against a plain-Python oracle -------------------------------------------
_CLIFF_ROW = st.tuples(
    st.integers(0, 2),  # arm
    st.one_of(st.sampled_from([1, 2, 4, 8, 8, 16]), st.none()),  # conc (repeats, nulls)
    st.one_of(st.sampled_from([100.0, 300.0, 305.0, 280.0, 900.0, 50.0]), st.none()),  # tput
    st.one_of(st.sampled_from([0.5, 1.0, 12.0, 40.0, 200.0]), st.none()),  # ttft
    st.one_of(st.sampled_from([0.0, 0.02, 0.07]), st.none()),  # error rate
)
_PARAMS = st.sampled_from(
    [CliffParams(), CliffParams(tput_fraction=0.8, ttft_ratio=2.0, ttft_floor_s=0.5),
     CliffParams(knee_min_gain=0.5, error_rate=0.0)]
)  # fmt: skip


def _cliff_oracle(rows: list[tuple[Any, ...]], params: CliffParams) -> tuple[list[Any], list[bool]]:
    """The cliff rules of `analysis.frontier.cliff`'s docstring, one arm at a time in plain
    Python (rows sorted by arm, then conc with nulls last): each row's knee conc and whether it
    is post-cliff. An unknown value (None) never makes a row post-cliff, nor a knee."""
    knees: list[Any] = []
    post: list[bool] = []
    for a in sorted({r[0] for r in rows}):
        arm = [r for r in rows if r[0] == a]
        concs = [r[1] for r in arm]
        ts = [r[2] for r in arm]
        stops = [
            i + 1 < len(arm)
            and ts[i] is not None
            and ts[i + 1] is not None
            and ts[i + 1] < ts[i] * (1.0 + params.knee_min_gain)
            for i in range(len(arm))
        ]
        knee = min(
            (c for c, s in zip(concs, stops, strict=True) if s and c is not None), default=None
        )
        first_at_knee = next((r for r in arm if r[1] == knee), None) if knee is not None else None
        knee_ttft = (first_at_knee[3] if first_at_knee else None) or 0.0
        limit = max(knee_ttft * params.ttft_ratio, params.ttft_floor_s)
        # the best throughput before each row (none after a row whose throughput is unknown);
        # repeated concurrencies take the value of their first row
        prev: list[Any] = [
            None if i == 0 or ts[i - 1] is None else max(t for t in ts[:i] if t is not None)
            for i in range(len(arm))
        ]
        prev = [prev[concs.index(c)] for c in concs]
        for (_, c, t, ttft, err), p in zip(arm, prev, strict=True):
            past = knee is not None and c is not None and c > knee
            low = past and t is not None and p is not None and t < params.tput_fraction * p
            slow = past and ttft is not None and ttft > limit
            errc = past and err is not None and err > params.error_rate
            knees.append(knee)
            post.append(bool(low or slow or errc))
    return knees, post


@settings(max_examples=500, deadline=None)
@given(st.lists(_CLIFF_ROW, min_size=1, max_size=40), _PARAMS)
def test_the_cliff_rules_equal_a_plain_python_oracle(
    rows: list[tuple[Any, ...]], params: CliffParams
) -> None:
    pts = pl.DataFrame(
        rows,
        schema={
            "arm": pl.Int64,
            Col.CONC: pl.Int64,
            Col.TPUT_PER_GPU: pl.Float64,
            Col.P90_TTFT: pl.Float64,
            Col.ERROR_RATE: pl.Float64,
        },
        orient="row",
    ).sort("arm", Col.CONC, nulls_last=True, maintain_order=True)
    arm = pts.get_column("arm").to_numpy()
    got = arm_cliffs(cliff_frame(pts, params), arm, params)
    knees, post = _cliff_oracle(list(pts.iter_rows()), params)
    assert got.knee_conc.to_list() == knees
    assert got.post.tolist() == post


# ---- integer codes -----------------------------------------------------------------------------
def test_key_ranks_order_rows_as_a_sort_with_nulls_last() -> None:
    keys = pl.DataFrame({"a": ["b", None, "a", "b", None], "b": [2, 1, None, 2, 3]})
    assert key_ranks(keys).tolist() == [1, 2, 0, 1, 3]
    assert nulls_last_key(pl.Series([5, None, 3, 5])).tolist() == [2, 3, 0, 2]


def test_dense_codes_number_keys_by_first_appearance() -> None:
    f = pl.DataFrame({"a": ["x", "y", "x", None, None], "b": [1, 1, 1, 2, 2]})
    codes, first = dense_codes(f, ["a", "b"])
    assert (codes.tolist(), first.tolist()) == ([0, 1, 0, 2, 2], [0, 1, 3])


def test_gather_keeps_dtypes_of_all_null_columns_and_reads_across_chunks() -> None:
    f = pl.concat([pl.DataFrame({"a": [1, 2], "n": pl.Series([None, None], dtype=pl.String)})] * 2,
                  rechunk=False)  # fmt: skip
    got = gather(f, np.array([3, 0]))
    assert_frame_equal(
        got, pl.DataFrame({"a": [2, 1], "n": pl.Series([None, None], dtype=pl.String)})
    )


@pytest.mark.parametrize("span", [3, 2**20, 2**40])
def test_order_by_is_a_stable_lexicographic_sort(span: int) -> None:
    rng = np.random.default_rng(span)
    keys = [rng.integers(0, span, 500), rng.integers(0, 3, 500), rng.integers(0, span, 500)]
    assert (order_by(*keys) == np.lexsort(keys[::-1])).all()


def test_nondominated_sorted_accepts_equal_x_in_any_order() -> None:
    # one group, x descending; the x = 2 block lists its lower y first
    g, xs, ys = (np.array(v) for v in ([0, 0, 0, 0], [3, 2, 2, 1], [1, 2, 5, 9]))
    assert nondominated_sorted(g, xs, ys).tolist() == [True, False, True, True]
