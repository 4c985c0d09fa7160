"""The analysis' fast paths give exactly what its general paths give.

`analyze_points` takes shortcuts when the input allows them: dense ranks by polars, packed
integer sorts by polars, the cliff rules in input order when each arm is already one run by
load, `_windows_dense` for arms without nulls or repeated concurrencies, all-null columns made
instead of gathered, 32-bit list offsets. Each test here turns shortcuts off (the general code
they replaced is kept for the inputs they do not fit) and requires the same table, polylines and
cliff verdicts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal, assert_series_equal

import analysis.frontier.cliff as cliff_mod
import analysis.frontier.codes as codes_mod
import analysis.frontier.pareto as pareto_mod
import analysis.frontier.prune as prune_mod
from analysis.frontier.cliff import CliffParams, _windows_numpy, _windows_polars, cliff_frame
from analysis.frontier.dominance import dense, order_by, ranked
from analysis.frontier.prune import Analysis, analyze_points
from analysis.frontier.reasons import _distinct
from analysis.frontier.slo import parse_slo
from benchmarks.synth import SynthSpec, synth_points
from ingest.contract.col import Col


def _numpy_dense(values: np.ndarray) -> np.ndarray:
    return ranked(values)[0]


def _numpy_order_by(*keys: np.ndarray) -> np.ndarray:
    return np.lexsort(keys[::-1]).astype(np.int64)


def _general(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shortcut off: numpy ranks and sorts, sorted cliff order, general cliff windows,
    gathered all-null columns, 64-bit list offsets."""
    for mod in (pareto_mod, prune_mod, cliff_mod):
        monkeypatch.setattr(mod, "dense", _numpy_dense)
    for mod in (pareto_mod, prune_mod, cliff_mod):
        monkeypatch.setattr(mod, "order_by", _numpy_order_by)
    monkeypatch.setattr(prune_mod, "_ascending_within", lambda codes, key: False)
    monkeypatch.setattr(cliff_mod, "_windows_numpy", functools.partial(_windows_numpy, fast=False))
    monkeypatch.setattr(codes_mod, "_BIG", 1 << 62)
    monkeypatch.setattr(pareto_mod, "_LIST_OFFSETS_32", 0)


def _same(a: Analysis, b: Analysis) -> None:
    assert_frame_equal(a.table, b.table, check_exact=True)
    assert a.group_frontiers == b.group_frontiers
    assert a.arm_frontiers == b.arm_frontiers


@pytest.fixture(scope="module")
def synth() -> pl.DataFrame:
    # 20,000 rows: above the size from which `gather` makes all-null columns
    return synth_points(SynthSpec(n_points=20_000, n_arms=400, seed=7))


_CASES: dict[str, Callable[[pl.DataFrame], Analysis]] = {
    "default": lambda p: analyze_points(p),
    "x=p90_ttft": lambda p: analyze_points(p, x=Col.P90_TTFT),
    "uncapped": lambda p: analyze_points(p, max_dominated_by=None),
    "slo": lambda p: analyze_points(p, slo=parse_slo("p90_ttft<=2,error_rate<=0.01")),
    "strict cliffs": lambda p: analyze_points(
        p, cliff=CliffParams(tput_fraction=0.99, ttft_ratio=2, ttft_floor_s=1, error_rate=0.01)
    ),
}


def _inputs(p: pl.DataFrame) -> dict[str, pl.DataFrame]:
    k = p.height // 5
    chunked = pl.concat([p[i * k : (i + 1) * k] for i in range(4)] + [p[4 * k :]], rechunk=False)
    arms_reversed = p.with_row_index("__i").sort(
        pl.col(Col.ARM_ID).rank("dense").over(pl.lit(1)), "__i", descending=[True, False]
    )
    return {
        "as generated": p,
        "multi-chunk": chunked,
        "arms reversed (each arm one run)": arms_reversed.drop("__i"),
        "shuffled": p.sample(fraction=1.0, shuffle=True, seed=1),
    }


@pytest.mark.parametrize("case", list(_CASES))
@pytest.mark.parametrize("shape", ["as generated", "multi-chunk", "arms reversed (each arm one run)", "shuffled"])  # fmt: skip
def test_fast_paths_give_the_general_tables(
    synth: pl.DataFrame, case: str, shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    points = _inputs(synth)[shape]
    fast = _CASES[case](points)
    with monkeypatch.context() as m:
        _general(m)
        general = _CASES[case](points)
    _same(fast, general)


def test_fast_paths_give_the_general_tables_on_real_sweeps(
    points: Callable[..., pl.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = points()
    for x in (Col.MEDIAN_INTVTY, Col.P90_TTFT):
        fast = analyze_points(real, x=x)
        with monkeypatch.context() as m:
            _general(m)
            general = analyze_points(real, x=x)
        _same(fast, general)


_VALUES = st.lists(
    st.sampled_from([0.0, -0.0, 1.5, 1.5, 2.0, -3.0, float("nan"), float("inf"), -float("inf")]),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.lists(st.integers(-5, 2**40), max_size=40))
def test_dense_ranks_equal_numpys(floats: list[float], ints: list[int]) -> None:
    for values in (np.array(floats, dtype=np.float64), np.array(ints, dtype=np.int64)):
        assert dense(values).tolist() == ranked(values)[0].tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2**20)), max_size=60))
def test_order_by_equals_lexsort(pairs: list[tuple[int, int]]) -> None:
    keys = [np.array([p[i] for p in pairs], dtype=np.int64) for i in (0, 1)]
    assert order_by(*keys).tolist() == np.lexsort(keys[::-1]).tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 300), min_size=1, max_size=80))
def test_distinct_keys_equal_numpys_unique(keys: list[int]) -> None:
    arr = np.array(keys, dtype=np.int64)
    got, at = _distinct(arr)
    want, inverse = np.unique(arr, return_inverse=True)
    assert got.tolist() == want.tolist() and at.tolist() == inverse.tolist()


# arms without nulls or repeated concurrencies: the rows `_windows_dense` takes
_ARM_ROWS = st.lists(
    st.tuples(
        st.sampled_from([100.0, 300.0, 305.0, 280.0, 900.0, 50.0, 0.0]),  # tput
        st.sampled_from([0.5, 1.0, 12.0, 40.0, 200.0]),  # ttft
        st.sampled_from([0.0, 0.02, 0.07, 0.2]),  # error rate
    ),
    min_size=1,
    max_size=12,
)
_PARAMS = st.sampled_from(
    [CliffParams(), CliffParams(tput_fraction=0.8, ttft_ratio=2.0, ttft_floor_s=0.5),
     CliffParams(knee_min_gain=0.5, error_rate=0.0)]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(_ARM_ROWS, min_size=1, max_size=5), _PARAMS, st.booleans())
def test_dense_cliff_windows_equal_the_general_and_the_polars_rules(
    arms: list[list[tuple[float, float, float]]], params: CliffParams, ranks_given: bool
) -> None:
    rows: list[dict[str, Any]] = [
        {"arm": a, Col.CONC: 2**i, Col.TPUT_PER_GPU: t, Col.P90_TTFT: ttft, Col.ERROR_RATE: e}
        for a, arm in enumerate(arms)
        for i, (t, ttft, e) in enumerate(arm)
    ]
    pts = pl.DataFrame(rows)
    arm = pts.get_column("arm").to_numpy()
    f = cliff_frame(pts, params)
    t_rank = dense(f.get_column("__t").to_numpy()) if ranks_given else None
    knee, post, evidence_rows = _windows_numpy(f, arm, params, t_rank)
    g_knee, g_post, g_rows = _windows_numpy(f, arm, params, t_rank, fast=False)
    want = _windows_polars(f, arm, params)
    want_post = (want["__low"] | want["__slow"] | want["__errc"]).to_numpy()
    assert_series_equal(knee, g_knee)
    assert post.tolist() == g_post.tolist() == want_post.tolist()
    assert_frame_equal(evidence_rows, g_rows)
    assert_frame_equal(evidence_rows, want.filter(pl.Series(want_post)))
