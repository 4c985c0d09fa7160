"""The analysis' fast paths give exactly what its general paths give.

`analyze_points` takes shortcuts when the input allows them: dense ranks by polars, packed
integer sorts by polars, the cliff rules in input order when each arm is already one run by
load, all-null columns made instead of gathered, 32-bit list offsets. (The cliff rules are one
implementation, `analysis.frontier.cliff._windows_polars`, and have no fast path.) Each test here turns shortcuts off (the general code
they replaced is kept for the inputs they do not fit) and requires the same table, polylines and
cliff verdicts.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import analysis.frontier.cliff as cliff_mod
import analysis.frontier.codes as codes_mod
import analysis.frontier.pareto as pareto_mod
import analysis.frontier.prune as prune_mod
from analysis.frontier.cliff import CliffParams
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
    """Every shortcut off: numpy ranks and sorts, sorted cliff order, gathered all-null columns,
    64-bit list offsets."""
    for mod in (pareto_mod, prune_mod):
        monkeypatch.setattr(mod, "dense", _numpy_dense)
    for mod in (pareto_mod, prune_mod, cliff_mod):
        monkeypatch.setattr(mod, "order_by", _numpy_order_by)
    monkeypatch.setattr(prune_mod, "_ascending_within", lambda codes, key: False)
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
