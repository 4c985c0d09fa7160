"""History of one configuration across runs (analysis.comparison.history)."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

from analysis.comparison.history import arm_history
from analysis.frontier.interpolate import frontier_value
from analysis.frontier.prune import analyze_points
from ingest.contract.col import Col
from ingest.contract.schema import RunCol

TP4_DRAM = "TP4 EP4 | no spec | kv dram"


def _runs(*rows: tuple[str, str | None, str]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {RunCol.RUN_ID: r, RunCol.CREATED_AT: d, RunCol.INGESTED_AT: None, RunCol.BRANCH: b}
            for r, d, b in rows
        ],
        schema={
            RunCol.RUN_ID: pl.String,
            RunCol.CREATED_AT: pl.String,
            RunCol.INGESTED_AT: pl.String,
            RunCol.BRANCH: pl.String,
        },
    ).with_columns(pl.lit(None, pl.String).alias(RunCol.HEAD_SHA))


def test_one_arm_across_three_runs(points: Callable[..., pl.DataFrame]) -> None:
    base = points("dsr1")
    arm = base.filter(pl.col(Col.ARM_LABEL) == TP4_DRAM)[Col.ARM_ID][0]
    # The same configuration measured again twice: 10% better, then 5% worse than the first.
    later = [
        base.with_columns(
            pl.lit(run).alias(Col.RUN_ID),
            (pl.col(Col.TPUT_PER_GPU) * factor).alias(Col.TPUT_PER_GPU),
            (run + pl.col(Col.POINT_ID)).alias(Col.POINT_ID),
        )
        for run, factor in (("r2", 1.10), ("r3", 0.95))
    ]
    pts = pl.concat([base, *later])
    runs = _runs(
        ("r3", "2026-03-01", "main"), ("dsr1", "2026-01-01", "main"), ("r2", "2026-02-01", "pr")
    )
    hist = arm_history(pts, runs, [arm], 40.0)
    assert hist[Col.RUN_ID].to_list() == ["dsr1", "r2", "r3"]  # by date, not by id
    # The first run's arm frontier at 40 tok/s/user, by PCHIP on its own frontier; the others
    # scale with it (PCHIP is linear in y).
    own = next(
        f
        for f in analyze_points(base, group_by=(Col.RUN_ID, Col.ARM_ID)).arm_frontiers
        if dict(f.key)[Col.ARM_ID] == arm
    )
    first = frontier_value(own, 40.0)
    assert first == pytest.approx(2373.312452078361)  # the run page's "rank arms at 40" figure
    assert hist["y"].to_list() == pytest.approx([first, first * 1.10, first * 0.95])
    assert hist[RunCol.BRANCH].to_list() == ["main", "pr", "main"]
    # users 1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 256 in each run
    assert hist["points"].to_list() == [12, 12, 12]


def test_never_extrapolated(points: Callable[..., pl.DataFrame]) -> None:
    base = points("dsr1")
    arm = base.filter(pl.col(Col.ARM_LABEL) == TP4_DRAM)[Col.ARM_ID][0]
    hist = arm_history(base, _runs(("dsr1", "2026-01-01", "main")), [arm], 500.0)
    # The frontier covers 32.25..109.42 tok/s/user: at 500 there is no value, and it says so.
    row = hist.row(0, named=True)
    assert row["y"] is None
    assert (round(row["x_lo"], 2), round(row["x_hi"], 2)) == (32.25, 109.42)


def test_the_cli_table_and_csv(store: object) -> None:
    from typer.testing import CliRunner

    from paretolens.cli import app

    root = str(store.root)  # type: ignore[attr-defined]
    args = ["history", "--label", TP4_DRAM, "--at", "40", "--store", root]
    out = CliRunner().invoke(app, [*args, "--format", "csv"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0].startswith("run_id,date,branch,head_sha,arm_id,arm_label,x,y,x_lo,x_hi,points")
    assert len(lines) == 2 and lines[1].startswith("dsr1,") and ",2373.31" in lines[1]
    bad = CliRunner().invoke(app, ["history", "--at", "40", "--store", root])
    assert bad.exit_code == 2
