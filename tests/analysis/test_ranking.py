"""Arms ranked at one x (`analysis.comparison.ranking.rank_at`, `interpolate.frontier_value`) and the CLI's
`paretolens analyze RUN --at X`, on the real DeepSeek-R1 B200 offload sweep."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest
from scipy.interpolate import PchipInterpolator
from typer.testing import CliRunner

from analysis.comparison.ranking import RANKING_SCHEMA, rank_at
from analysis.frontier.interpolate import frontier_gap, frontier_value
from analysis.frontier.polylines import Frontier
from analysis.frontier.prune import analyze_points
from ingest.contract.col import Col
from ingest.store import Store
from paretolens.cli import app


def _frontier(xs: tuple[float, ...], ys: tuple[float, ...]) -> Frontier:
    key = ((Col.RUN_ID.value, "r"), (Col.ARM_ID.value, "a"))
    ids = tuple(f"p{i}" for i in range(len(xs)))
    return Frontier(key, "TP8", "median_intvty", "tput_per_gpu", ids, xs, ys, (None,) * len(xs))


def test_a_frontier_is_read_by_pchip_inside_its_x_range_and_nowhere_else() -> None:
    f = _frontier((10.0, 20.0, 40.0, 80.0), (900.0, 700.0, 400.0, 100.0))
    oracle = PchipInterpolator([10.0, 20.0, 40.0, 80.0], [900.0, 700.0, 400.0, 100.0])
    assert frontier_value(f, 30.0) == pytest.approx(float(oracle(30.0)), rel=1e-12)
    assert (frontier_value(f, 10.0), frontier_value(f, 80.0)) == (900.0, 100.0)
    assert (frontier_value(f, 9.99), frontier_value(f, 80.01)) == (None, None)
    # A one-point frontier has a value at its own x only.
    one = _frontier((25.0,), (500.0,))
    assert (frontier_value(one, 25.0), frontier_value(one, 26.0)) == (500.0, None)


def test_the_value_is_what_frontier_gap_reads_against_a_one_point_probe(
    points: Callable[..., pl.DataFrame],
) -> None:
    # The dashboard read it that way before; both must agree on every arm and every x.
    a = analyze_points(points("dsr1"), "median_intvty", "tput_per_gpu")
    for f in a.arm_frontiers:
        for x in (20.0, 32.5, 40.0, 64.0, 110.0, 200.0):
            probe = Frontier(f.key, "probe", f.x, f.y, ("probe",), (x,), (1.0,), (None,))
            gap = frontier_gap(f, probe)
            assert frontier_value(f, x) == (gap.baseline[0] if gap else None)


# The four arms of the DeepSeek-R1 offload sweep at 40 tok/s/user: the two TP4 arms reach it
# (their frontiers span 32-109 and 32-117 tok/s/user); the TP8 arms start above 95, so they
# have no value there and rank last.
DSR1_AT_40 = """\
run_id,arm_id,arm_label,x,y,x_lo,x_hi
dsr1,95de164366692f08,TP4 EP4 | no spec | kv dram,40.0,2373.312452078361,32.252481139461196,109.42388128549072
dsr1,b62ed87d0d83937d,TP4 EP4 | no spec | kv none,40.0,2068.9905747868493,32.01311979969919,117.43561876035291
dsr1,d1f94ba955dc3d7e,TP8 EP8 | no spec | kv none,40.0,,112.52670904830688,121.97970183237813
dsr1,d29dc9d2e21faf8f,TP8 EP8 | no spec | kv dram,40.0,,95.12443539259424,123.25543087272611
"""


def test_arms_are_ranked_best_first_with_the_unreached_last(
    points: Callable[..., pl.DataFrame],
) -> None:
    a = analyze_points(points("dsr1"), "median_intvty", "tput_per_gpu")
    assert rank_at(a.arm_frontiers, 40.0).write_csv() == DSR1_AT_40
    assert rank_at(a.arm_frontiers, None).equals(pl.DataFrame(schema=RANKING_SCHEMA))


def test_the_cli_ranks_arms_at_an_interactivity(store: Store) -> None:
    cli = CliRunner()
    root = ("--store", str(store.root))
    res = cli.invoke(app, ["analyze", "dsr1", "--at", "40", "--format", "csv", *root])
    assert res.exit_code == 0, res.output
    assert res.stdout == DSR1_AT_40
    res = cli.invoke(app, ["analyze", "dsr1", "--at", "40", *root])
    assert res.exit_code == 0 and "arms ranked by tput_per_gpu at median_intvty = 40" in res.stdout
    header = next(line for line in res.stdout.splitlines() if "run_id" in line)
    assert [c.strip() for c in header.strip("┃ ").split("┃")] == [
        "run_id", "arm_label", "median_intvty", "tput_per_gpu", "x_lo", "x_hi",
    ]  # fmt: skip
    res = cli.invoke(app, ["analyze", "dsr1", "--at", "-1", *root])
    assert res.exit_code == 2 and "--at -1: expected a positive x" in res.stderr
