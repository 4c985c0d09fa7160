"""Analysis commands: analyze, prune, al-check, deltas, compare.

Each command reads points from the store, calls one `analysis` function and renders its result as
a rich table, JSON, CSV (or markdown / YAML / a dispatch line where useful). Caller mistakes
(unknown run, bad metric, unexportable data) exit 2 with a message on stderr, in one place:
`common.guard`. Tables reach the screen through `common.emit_frame`, the renderer registry.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import polars as pl
import typer
from rich.text import Text

from analysis.acceptance import AcceptanceParams, check_acceptance, load_golden_tables
from analysis.comparison.baseline import MAIN
from analysis.comparison.compare import comparison_json
from analysis.comparison.deltas import compute_deltas
from analysis.comparison.ranking import rank_at
from analysis.frontier.cliff import CliffParams
from analysis.frontier.prune import analyze_points
from analysis.frontier.slo import parse_slo
from analysis.render import Rendering
from analysis.sweep.export import dispatch_command, dispatch_problem, search_space
from analysis.sweep.pruned import prune_list, pruned_json, pruned_table
from analysis.sweep.sweep_config import validate_sweep_config
from analysis.tables import Table, json_text
from ingest.bundled import GOLDEN_AL_DIR
from ingest.contract.col import Col
from ingest.contract.schema import DEFAULT_GROUP
from ingest.eval_store import read_evals
from ingest.store import Store
from ingest.untrusted.yaml_load import load_yaml
from paretolens.commands.common import (
    RunOpt,
    RunsArg,
    StoreOpt,
    UsageError,
    XOpt,
    YOpt,
    emit,
    emit_frame,
    err,
    guard,
    inert,
    open_store,
    runs_of,
)
from paretolens.commands.format_opts import FmtOpt

GroupOpt = Annotated[
    str, typer.Option("--group-by", help="comma-separated comparison-group columns")
]
SloOpt = Annotated[
    str | None,
    typer.Option(
        "--slo",
        help="latency/error limits, e.g. 'p90_ttft<=2,p90_tpot<=0.05,error_rate<=0.01' "
        "(seconds): points that break one are out_of_slo and left off the frontier",
    ),
]
ErrOpt = Annotated[
    float, typer.Option("--max-error-rate", help="points above this error rate are invalid")
]


class PruneFmt(StrEnum):
    yaml = "yaml"
    json = "json"
    csv = "csv"
    cli = "cli"


def _evals(st: Store, runs: Sequence[str]) -> pl.DataFrame | None:
    """The eval rows of `runs` (None when they have none), so deltas and compare flag accuracy."""
    ev = read_evals(st, list(runs))
    return ev if ev.height else None


def _points(st: Store | Path | None, runs: Sequence[str] | None) -> pl.DataFrame:
    """The points of `runs` in a store (opened here when given as a path or None)."""
    if not runs:
        raise UsageError(
            "give at least one run ID, as an argument or with --run (see `paretolens runs`)"
        )
    st = st if isinstance(st, Store) else open_store(st)
    pts = st.points(list(runs))
    _have_points(st, pts, runs)
    return pts


def _have_points(st: Store, pts: pl.DataFrame, runs: Sequence[str]) -> None:
    """Refuse runs with no point among `pts` (unknown run ids, mostly)."""
    missing = sorted(set(runs) - set(pts.get_column(Col.RUN_ID).unique().to_list()))
    if missing:
        raise UsageError(
            f"run(s) {', '.join(missing)} have no points in store {st.root}; see `paretolens runs`"
        )


def _group(spec: str) -> tuple[str, ...]:
    cols = tuple(c.strip() for c in spec.split(",") if c.strip())
    bad = [c for c in cols if c not in Col.__members__.values()]
    if bad:
        raise UsageError(f"unknown --group-by column(s) {bad}; see docs/schema.md")
    return cols


_DEFAULT_GROUP = ",".join(DEFAULT_GROUP)


def analyze(
    runs: RunsArg = None,
    run: RunOpt = None,
    x: XOpt = Col.MEDIAN_INTVTY,
    y: YOpt = Col.TPUT_PER_GPU,
    group_by: GroupOpt = _DEFAULT_GROUP,
    max_error_rate: ErrOpt = 0.10,
    slo: SloOpt = None,
    at: Annotated[
        float | None,
        typer.Option(
            "--at",
            help="rank the arms at this x instead (e.g. --at 40: the y of every arm's frontier "
            "at 40 tok/s/user, best first; empty where the arm does not reach it)",
        ),
    ] = None,
    fmt: FmtOpt = "table",
    store: StoreOpt = None,
) -> None:
    """One verdict per point: frontier | dominated | post_cliff | invalid | out_of_slo, with
    the reason; with --at, the arms ranked by their frontier's y at that x."""
    with guard():
        if at is not None and not (math.isfinite(at) and at > 0):
            raise UsageError(f"--at {at:g}: expected a positive x")
        a = analyze_points(
            _points(store, runs_of(runs, run)),
            x,
            y,
            _group(group_by),
            CliffParams(),
            max_error_rate,
            slo=parse_slo(slo),
        )
        if at is not None:
            _emit_ranking(rank_at(a.arm_frontiers, at), fmt, x, y, at)
            return
        table = a.table
        if fmt in ("table", "markdown"):  # the axes by name, and isl/osl beside the arm
            table = table.rename({k: v for k, v in (("x", x), ("y", y)) if v not in table.columns})
        ident = ["run_id", "arm_label", Col.ISL, Col.OSL, "conc"]
        cols = [*ident, *(c if c in table.columns else k for k, c in (("x", x), ("y", y)))]
        cols += ["verdict", "on_arm_frontier", "reason"]
        emit_frame(
            table,
            fmt,
            cols,
            f"{y} vs {x}: " + ", ".join(f"{k} {v}" for k, v in a.counts().items()),
        )


def _emit_ranking(ranking: pl.DataFrame, fmt: str, x: str, y: str, at: float) -> None:
    if fmt in ("table", "markdown"):  # the axes by name
        ranking = ranking.rename({"x": x, "y": y} if x != y else {})
    cols = ["run_id", "arm_label", *ranking.columns[3:]]
    emit_frame(ranking, fmt, cols, f"arms ranked by {y} at {x} = {at:g}")


def prune(
    runs: RunsArg = None,
    run: RunOpt = None,
    x: XOpt = Col.MEDIAN_INTVTY,
    y: YOpt = Col.TPUT_PER_GPU,
    group_by: GroupOpt = _DEFAULT_GROUP,
    neighbours: Annotated[
        bool, typer.Option("--neighbours", help="also keep neighbouring concurrencies")
    ] = False,
    arm_frontier: Annotated[
        bool, typer.Option("--arm-frontier", help="also keep every arm's own frontier")
    ] = False,
    master: Annotated[
        Path | None, typer.Option("--master", help="master config to reuse keys from")
    ] = None,
    dram_utilization: Annotated[float, typer.Option("--dram-utilization")] = 0.80,
    slo: SloOpt = None,
    fmt: Annotated[PruneFmt, typer.Option("--format")] = PruneFmt.yaml,
    store: StoreOpt = None,
) -> None:
    """The points worth the full sweep: master-config snippet, JSON, CSV or a test-config line."""
    with guard():
        cfg = validate_sweep_config(load_yaml(master.read_text())) if master else None
        a = analyze_points(
            _points(store, runs_of(runs, run)), x, y, _group(group_by), slo=parse_slo(slo)
        )
        p = prune_list(a, neighbours=neighbours, include_arm_frontier=arm_frontier, master=cfg)
        space = search_space(p, dram_utilization)
        # Arms that cannot be exported come first, each with what would make it exportable.
        for label, why in space.skipped if fmt in (PruneFmt.yaml, PruneFmt.cli) else ():
            err.print(
                Text.assemble(("not exported:", "yellow"), " ", inert(f"{label}: {why}")),
                soft_wrap=True,
            )
        if fmt is PruneFmt.yaml:
            sys.stdout.write(space.yaml())
        elif fmt is PruneFmt.json:
            sys.stdout.write(json_text(pruned_json(p)))
        elif fmt is PruneFmt.csv:
            emit(Table("pruned", "", pruned_table(p)), "csv", Rendering(units=False))
        else:
            problem = dispatch_problem(p, dram_utilization)
            if problem is not None:
                head = ("no single test-config line runs exactly the kept points:", "red")
                err.print(Text.assemble(head, " ", inert(problem)), soft_wrap=True)
                raise typer.Exit(1)
            sys.stdout.write(dispatch_command(p) + "\n")
        if space.skipped and fmt in (PruneFmt.yaml, PruneFmt.cli):
            # The InferenceX outputs left arms out; JSON and CSV carry every kept point.
            raise typer.Exit(1)


def al_check(
    runs: RunsArg = None,
    run: RunOpt = None,
    tolerance: Annotated[
        float, typer.Option("--tolerance", help="allowed |measured - expected| AL")
    ] = 0.05,
    golden: Annotated[
        Path, typer.Option("--golden", help="directory of golden AL YAML tables")
    ] = GOLDEN_AL_DIR,
    fmt: FmtOpt = "table",
    store: StoreOpt = None,
) -> None:
    """Measured acceptance length of every spec-decoding point vs pinned or golden AL.

    Exits 1 when any point fails.
    """
    with guard():
        checks = check_acceptance(
            _points(store, runs_of(runs, run)),
            load_golden_tables(golden),
            AcceptanceParams(tolerance),
        )
        cols = [
            "run_id",
            "arm_label",
            "conc",
            "num_spec_tokens",
            "al_measured",
            "al_expected",
            "al_expected_source",
            "verdict",
            "reason",
        ]
        emit_frame(checks, fmt, cols, f"acceptance length (tolerance {tolerance:g})")
    if checks.height and (checks.get_column("verdict") == "fail").any():
        raise typer.Exit(1)


def deltas(
    runs: RunsArg = None,
    run: RunOpt = None,
    vs_run: Annotated[
        str | None, typer.Option("--vs-run", help="pair arms across this run and --run")
    ] = None,
    axis: Annotated[
        str, typer.Option("--axis", help="the A/B field (an arm-identity column)")
    ] = Col.SPEC_DECODING,
    x: XOpt = Col.MEDIAN_INTVTY,
    y: YOpt = Col.TPUT_PER_GPU,
    fmt: FmtOpt = "table",
    frontier: Annotated[
        bool, typer.Option("--frontier", help="print the frontier-level deltas instead")
    ] = False,
    store: StoreOpt = None,
) -> None:
    """Treatment vs baseline arms that differ only in --axis, at equal concurrency."""
    with guard():
        given = runs_of(runs, run)
        every = runs_of(given, [vs_run] if vs_run else [])
        st = open_store(store)
        d = compute_deltas(
            _points(st, every),
            axis,
            cross_run=vs_run is not None,
            x=x,
            y=y,
            evals=_evals(st, every),
        )
        if frontier:
            cols = [
                "baseline_arm_label",
                "treatment_arm_label",
                "x_lo",
                "x_hi",
                "mean_delta_pct",
                "area_delta_pct",
                "note",
            ]
            emit_frame(d.frontier, fmt, cols, f"frontier delta of {y} at matched {x} ({axis})")
            return
        cols = [
            "flag",
            "confounds",
            "baseline_arm_label",
            "treatment_arm_label",
            "isl",
            "osl",
            "conc",
            "request_rate",
            "tput_per_gpu_delta_pct",
            "output_tput_per_gpu_delta_pct",
            "median_intvty_delta_pct",
            "p90_ttft_delta_pct",
            "baseline_verdict",
            "treatment_verdict",
            "al_measured_treatment",
        ]
        flagged = d.table.filter(pl.col("flag").is_not_null()).height if d.table.height else 0
        emit_frame(
            d.table,
            fmt,
            cols,
            f"{axis} deltas at equal load ({flagged} pair(s) flagged: a side past its cliff, "
            "invalid or out of the SLO; the frontier deltas leave those points out)",
        )


def compare(
    base: Annotated[str, typer.Argument(help="baseline run id (e.g. the last main sweep)")],
    candidate: Annotated[str, typer.Argument(help="candidate run id (e.g. the PR sweep)")],
    x: XOpt = Col.MEDIAN_INTVTY,
    y: YOpt = Col.TPUT_PER_GPU,
    slo: SloOpt = None,
    fmt: FmtOpt = "table",
    store: StoreOpt = None,
) -> None:
    """Candidate run vs base run: per-arm frontier uplift and per-conc deltas.

    BASE `main` compares with the latest main-branch result per configuration, as the compare
    page's `base=main` does (the runs used are named on stderr)."""
    with guard():
        # The compare page's own data (same points, evals, SLO and markdown as /compare).
        from views.compare_data import CompareData
        from views.query.state import CompareView

        view = CompareView.model_validate(
            {"base": base, "candidate": candidate, "x": x, "y": y, "slo": slo or ""}
        )
        st = open_store(store)
        data = CompareData(st, view)
        _have_points(st, data.points, [r for r in (base, candidate) if r != MAIN])
        c = data.comparison
        if base == MAIN and not c.points.height and not c.arms.height:
            raise UsageError(
                f"no main-branch result in the store matches a configuration of {candidate}: "
                "fetch or ingest a main-branch run (paretolens fetch RUN_ID)"
            )
        for note in data.notes:
            err.print(note, markup=False, soft_wrap=True)
        if fmt == "markdown":
            sys.stdout.write(data.markdown)
        elif fmt == "json":
            sys.stdout.write(json_text(comparison_json(c)))
        elif fmt == "csv":
            emit(Table("compare_points", "", c.points), "csv", Rendering(units=False))
        else:
            emit_frame(
                c.arms,
                fmt,
                ["arm_label", "matched_concs", "x_lo", "x_hi", "uplift_pct", "area_between"],
                f"{candidate} vs {base}: frontier uplift of {y} at matched {x}",
            )
            emit_frame(
                c.points,
                fmt,
                ["arm_label", "conc", *[f"{m}_delta_pct" for m in c.metrics]],
                "delta % at equal concurrency",
            )


def register(app: typer.Typer) -> None:
    """Register this group's commands on the app."""
    app.command("analyze")(analyze)
    app.command("prune")(prune)
    app.command("al-check")(al_check)
    app.command("deltas")(deltas)
    app.command("compare")(compare)
