"""The store's tables: runs, points, rejects (through the renderer registry, any `--format`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from ingest.contract.col import Col
from ingest.contract.schema import RejectCol, RunCol
from paretolens.commands.common import StoreOpt, emit, err, fail, open_store
from paretolens.commands.format_opts import FileFmtOpt


def _emit(df: pl.DataFrame, fmt: str, output: Path | None) -> None:
    """A store table through the renderer registry: headers without units, JSON as an array of
    rows, floats as stored in the terminal table (which takes the terminal's width now)."""
    from analysis.render import FORMATS, Rendering
    from analysis.tables import Table

    if FORMATS[fmt].binary and output is None and sys.stdout.isatty():
        raise fail(f"--format {fmt} is binary: give --output FILE or redirect stdout")
    how = Rendering(units=False, shape="rows", digits=None)
    emit(Table("store", "", df), fmt, how, output)


def runs(store: StoreOpt = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List the runs in the store."""
    df = open_store(store).runs()
    if as_json:
        _emit(df, "json", None)
    else:
        _emit(
            df.select(
                RunCol.RUN_ID,
                RunCol.BRANCH,
                RunCol.TITLE,
                RunCol.STATUS,
                RunCol.POINT_COUNT,
                RunCol.REJECT_COUNT,
            ),
            "table",
            None,
        )


def points(
    run: Annotated[list[str] | None, typer.Option("--run", help="run id (repeatable)")] = None,
    fmt: FileFmtOpt = "table",
    output: Annotated[Path | None, typer.Option("--output")] = None,
    costs: Annotated[
        bool,
        typer.Option(
            "--costs",
            help="fill the cost and energy columns (tok/s/MW, J/tok, $/Mtok per cost class) "
            "from data/hardware.yaml",
        ),
    ] = False,
    hwcost: Annotated[
        str | None,
        typer.Option(
            "--hwcost",
            help="override kW/GPU and $/GPU-hour per hardware (implies --costs), e.g. "
            "'h200:kw=1.2,hyperscaler=2.5;b200:neocloud=3.1'",
        ),
    ] = None,
    repeats: Annotated[
        bool,
        typer.Option(
            "--repeats",
            help="one row per underlying measurement: a point that summarises repeated runs "
            "of one configuration and load gives each repeat with its source and values",
        ),
    ] = False,
    store: StoreOpt = None,
) -> None:
    """Print the canonical points of runs (with --costs, their cost and energy per token)."""
    df = open_store(store).points(run or None)
    if repeats:
        from ingest.normalize.measurements import repeat_rows

        rows = repeat_rows(df).sort(Col.RUN_ID, Col.ARM_LABEL, Col.CONC, "repeat")
        if fmt == "table":
            rows = rows.select(
                Col.RUN_ID,
                Col.ARM_LABEL,
                Col.CONC,
                Col.REQUEST_RATE,
                "repeat",
                "repeat_source",
                *[c for c in (Col.TOTAL_TPUT, Col.MEDIAN_TTFT, Col.DURATION) if c in rows.columns],
            )
        _emit(rows, fmt, output)
        return
    shown: list[Col] = []
    if costs or hwcost is not None:
        from analysis.cost import load_hardware, parse_hwcost, with_costs
        from ingest.contract.schema import header

        try:
            filled = with_costs(df, load_hardware(), parse_hwcost(hwcost or ""))
        except ValueError as exc:
            raise fail(str(exc)) from exc
        for note in filled.notes():
            err.print(f"note: {note}")
        df = filled.frame
        shown = [
            Col.TPUT_PER_MW,
            Col.JOULES_PER_TOKEN,
            Col.COST_PER_MTOK_HYPERSCALER,
            Col.COST_PER_MTOK_NEOCLOUD,
            Col.COST_PER_MTOK_RENTAL3Y,
        ]
    if fmt == "table":
        df = df.select(
            Col.RUN_ID,
            Col.ARM_LABEL,
            Col.CONC,
            Col.TPUT_PER_GPU,
            Col.MEDIAN_INTVTY,
            Col.P90_TTFT,
            Col.AL_MEASURED,
            *shown,
        ).sort(Col.RUN_ID, Col.ARM_LABEL, Col.CONC)
        if shown:  # the cost columns' units in their headers
            df = df.rename({str(c): header(c) for c in shown})
    _emit(df, fmt, output)


def rejects(
    run: Annotated[list[str] | None, typer.Option("--run")] = None,
    fmt: FileFmtOpt = "table",
    store: StoreOpt = None,
) -> None:
    """Print the rejected files and rows, and the files read with nothing to store, with why."""
    df = open_store(store).rejects(run or None)
    if fmt == "table":
        df = df.select(
            RejectCol.RUN_ID,
            pl.col(RejectCol.OUTCOME).fill_null("rejected"),
            RejectCol.PATH,
            RejectCol.FIELD,
            RejectCol.REASON,
        )
    _emit(df, fmt, None)


def register(app: typer.Typer) -> None:
    """Register the store table commands."""
    app.command()(runs)
    app.command()(points)
    app.command()(rejects)
