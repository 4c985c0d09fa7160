"""`paretolens history`: one configuration followed across runs."""

from __future__ import annotations

from typing import Annotated

import polars as pl
import typer

from analysis.comparison.history import arm_history
from ingest.contract.col import Col
from paretolens.commands.common import (
    StoreOpt,
    UsageError,
    XOpt,
    YOpt,
    emit_frame,
    guard,
    open_store,
)
from paretolens.commands.format_opts import FmtOpt


def history(
    at: Annotated[float, typer.Option("--at", help="the interactivity (x) to read each run at")],
    arm: Annotated[
        list[str] | None, typer.Option("--arm", help="arm id to follow (repeatable)")
    ] = None,
    label: Annotated[
        str | None,
        typer.Option("--label", help="follow every arm whose label contains this text"),
    ] = None,
    x: XOpt = Col.MEDIAN_INTVTY,
    y: YOpt = Col.TPUT_PER_GPU,
    fmt: FmtOpt = "table",
    store: StoreOpt = None,
) -> None:
    """One configuration across runs in time: each run's arm frontier read at x = --at (PCHIP
    between measured points, never extrapolated), oldest run first."""
    with guard():
        st = open_store(store)
        pts = st.points()
        arms = list(arm or [])
        if label:
            arms += (
                pts.filter(pl.col(Col.ARM_LABEL).str.contains(label, literal=True))
                .get_column(Col.ARM_ID)
                .unique()
                .to_list()
            )
        if not arms:
            raise UsageError(
                "name the arms to follow: --arm ID (see `paretolens points`) or --label TEXT"
            )
        table = arm_history(pts, st.runs(), arms, at, x=x, y=y)
        if table.height == 0:
            raise UsageError(f"no run in store {st.root} has points of arm(s) {', '.join(arms)}")
        emit_frame(
            table,
            fmt,
            ["run_id", "date", "branch", "arm_label", "x", "y", "x_lo", "x_hi", "points"],
            f"{y} at {x} = {at:g}, run by run",
        )


def register(app: typer.Typer) -> None:
    """Register the history command."""
    app.command()(history)
