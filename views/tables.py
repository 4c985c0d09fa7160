"""Named tables: what the grids show and the exports serve, with a unit for every column.

Every table is built from a `RunData` or `CompareData` (`run_table`, `compare_table`) or the
runs catalog (`index_table`), so a grid and its CSV/JSON/Parquet download are the same frame. The
contract is `analysis.tables.Table`: canonical columns take their unit and description from
`ingest.contract.schema`, the analyses' output columns from `analysis.tables.COLUMNS`, and their derived
columns (`<metric>_baseline`, `*_delta_pct`, the plane's `x`/`y`) from
`analysis.tables.derived_units` on the view's axes; only the page's own columns (the arm name, the
accuracy columns) are named here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import polars as pl

from analysis import tco
from analysis.comparison.history import arm_history
from analysis.sweep.pruned import pruned_table
from analysis.tables import Table, derived_units
from ingest.changelog import config_key, touches
from ingest.contract.col import Col
from ingest.contract.schema import RunCol
from ingest.store import Store
from runner import service
from views.compare_data import CompareData
from views.facets import ARM_NAME
from views.query.state import CompareView, HistoryView, IndexView, JobsView, RunView
from views.run_data import RunData
from views.source import DataSource

# What the page's tables add to the analysis columns (`analysis.tables.COLUMNS`).
_EXTRA_DESCRIPTIONS = {
    ARM_NAME: "arm label with the identity fields that tell this view's arms apart",
}


def _table(name: str, title: str, frame: pl.DataFrame, view: RunView | CompareView) -> Table:
    units = derived_units(frame.columns, view.x, view.y)
    return Table(name, title, frame, units, _EXTRA_DESCRIPTIONS)


TABLES: dict[str, Callable[[RunData], Table]] = {
    "points": lambda d: _table(
        "points", "Points with verdicts", d.points_table.drop(Col.INGESTED_AT), d.view
    ),
    "al": lambda d: _table("al", "Acceptance-length checks", d.acceptance, d.view),
    "deltas": lambda d: _table(
        "deltas", f"A/B deltas on {d.view.ab} at equal concurrency", d.deltas.table, d.view
    ),
    "deltas_frontier": lambda d: _table(
        "deltas_frontier", "Frontier delta at matched x", d.deltas.frontier, d.view
    ),
    "at": lambda d: _table("at", f"Arms at {d.view.x} = {d.view.at}", d.at_target, d.view),
    "pruned": lambda d: _table(
        "pruned", "Pruned list (kept and dropped)", pruned_table(d.pruned), d.view
    ),
    "rejects": lambda d: _table("rejects", "Rejected files and rows", d.rejects, d.view),
    # issue 27: the TCO calculator's fleets (empty until tco_intvty and tco_tput are set)
    "tco": lambda d: Table(
        "tco",
        f"Fleet for {d.view.tco_tput} tok/s at {d.view.tco_intvty} tok/s/user ({d.view.tco_cost})",
        d.tco,
        tco.UNITS,
        {**_EXTRA_DESCRIPTIONS, **tco.DESCRIPTIONS},
    ),
    # issue 14: the run's uplift over its baseline, per arm (empty without `baseline=`)
    "baseline": lambda d: _table(
        "baseline", "Uplift over the baseline per arm", _uplift(d), d.view
    ),
}


def _uplift(d: RunData) -> pl.DataFrame:
    b = d.baseline
    return b.table(d.names) if b is not None else pl.DataFrame(schema={Col.ARM_ID.value: pl.String})


def _only(c: CompareData) -> pl.DataFrame:
    return pl.concat(
        [
            c.comparison.only_in_base.with_columns(pl.lit("base").alias("only_in")),
            c.comparison.only_in_candidate.with_columns(pl.lit("candidate").alias("only_in")),
        ],
        how="diagonal_relaxed",
    )


COMPARE_TABLES: dict[str, Callable[[CompareData], Table]] = {
    "uplift": lambda c: _table("uplift", "Frontier uplift per arm", c.comparison.arms, c.view),
    "compare_points": lambda c: _table(
        "compare_points", "Per-conc deltas", c.comparison.points, c.view
    ),
    "unmatched": lambda c: _table("unmatched", "Arms in only one run", _only(c), c.view),
}


def run_table(data: RunData, name: str) -> Table:
    """A named table of a run view (see TABLES).

    Raises:
        KeyError: for an unknown name, listing the known ones.
    """
    return _named(TABLES, name)(data)


def compare_table(data: CompareData, name: str) -> Table:
    """A named table of a comparison (see COMPARE_TABLES).

    Raises:
        KeyError: for an unknown name, listing the known ones.
    """
    make = _named(COMPARE_TABLES, name)
    return data.memo(f"table:{name}", lambda: make(data))


T = TypeVar("T")


def _named(registry: Mapping[str, T], name: str) -> T:
    """A registry's entry, or a KeyError listing the known names."""
    try:
        return registry[name]
    except KeyError as exc:
        raise KeyError(f"unknown table {name!r}; tables: {', '.join(registry)}") from exc


def history_table(source: DataSource, view: HistoryView) -> Table:
    """The history page's table: the arms' frontier y at x = `at`, run by run (issue 14)."""
    title = f"{view.y} at {view.x} = {view.at:g}, run by run" if view.at else "History"
    frame: pl.DataFrame = source.cached(("history", view), lambda: history_frame(source, view))
    return Table("history", title, frame, derived_units(frame.columns, view.x, view.y))


def history_frame(source: DataSource, view: HistoryView) -> pl.DataFrame:
    """`analysis.comparison.history.arm_history` over the store for a history view (cost and energy
    columns filled with the view's `hwcost` when the plane reads one)."""
    if not view.arm or view.at is None:
        return arm_history(pl.DataFrame(), pl.DataFrame(), [], 1.0)
    points = source.arm_points(view.arm)
    if points.height:
        points = source.costs(points, view.hwcost).frame
    return arm_history(points, source.runs(), list(view.arm), view.at, x=view.x, y=view.y)


def history_changelog(
    source: DataSource, view: HistoryView, frame: pl.DataFrame
) -> list[dict[str, Any]]:
    """The changelog entries of the runs a history shows (issue 27), oldest run first: each
    with its run, its PR link and description, and the view's arms it names (by InferenceX
    config key, `ingest.changelog.touches`)."""
    if not frame.height:
        return []
    points = source.arm_points(view.arm)
    keys: dict[str, tuple[str, str]] = {}
    for r in points.unique(Col.ARM_ID, keep="first").iter_rows(named=True):
        key = config_key(r[Col.MODEL_PREFIX], r[Col.PRECISION], r[Col.HW], r[Col.FRAMEWORK])
        keys[str(r[Col.ARM_ID])] = (key, str(r[Col.ARM_LABEL] or r[Col.ARM_ID]))
    out: list[dict[str, Any]] = []
    for r in frame.unique(Col.RUN_ID, keep="first", maintain_order=True).iter_rows(named=True):
        for entry in source.store.changelog(str(r[Col.RUN_ID])):
            arms = [label for key, label in keys.values() if touches(entry, key)]
            out.append({"run_id": r[Col.RUN_ID], "date": r["date"], "arms": arms, **entry})
    return out


def index_table(source: DataSource, view: IndexView) -> Table:
    """The runs index filtered by an index view."""
    df = source.catalog()
    expr = pl.lit(True)
    if view.q:
        q = view.q.lower()
        text = pl.concat_str(
            [pl.col(c).cast(pl.String) for c in df.columns], separator=" ", ignore_nulls=True
        )
        expr = expr & text.str.to_lowercase().str.contains(q, literal=True)
    for name, col in (
        ("model", Col.MODEL_PREFIX),
        ("hw", Col.HW),
        ("branch", RunCol.BRANCH),
        ("status", RunCol.STATUS),
    ):
        values = getattr(view, name)
        if values:
            hits = [pl.col(col).fill_null("").str.split(", ").list.contains(v) for v in values]
            expr = expr & pl.any_horizontal(hits)
    # A run without a creation date (a local sweep) is dated by when it was ingested.
    when = pl.coalesce(
        pl.col(RunCol.CREATED_AT).cast(pl.String).replace("", None),
        pl.col(RunCol.INGESTED_AT).dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    if view.since:
        expr = expr & (when.fill_null("") >= view.since)
    if view.until:
        expr = expr & (when.fill_null("9999") <= view.until + "T99")
    return Table("runs", "Runs", df.filter(expr))


KEY_POINT_COLUMNS: tuple[str, ...] = (
    Col.RUN_ID,
    ARM_NAME,
    Col.CONC,
    "verdict",
    Col.TPUT_PER_GPU,
    Col.OUTPUT_TPUT_PER_GPU,
    Col.MEDIAN_INTVTY,
    Col.P90_INTVTY,
    Col.MEDIAN_E2EL,
    Col.P90_TTFT,
    Col.AL_MEASURED,
    Col.NUM_REQUESTS_SUCCESSFUL,
    Col.ERROR_RATE,
    Col.HW,
    Col.PRECISION,
    Col.FRAMEWORK,
    Col.SPEC_DECODING,
    Col.KV_OFFLOADING,
    "accuracy",  # issue 14: the arm's eval tasks, score ± stderr, n_eff
    "reason",
)


def jobs_table(store: Store, view: JobsView) -> Table:
    """Every job (or, with `job=`, the points of one job) as the jobs page lists them."""
    if view.job:
        st = service.get_job(store, view.job)
        rows = [
            {"job": st.id, "point_id": p.point_id, "label": p.label, "conc": p.conc, "state": p.state.value,
             "attempt": p.attempt, "elapsed_s": p.elapsed_s(), "exit_code": p.exit_code, "reason": p.reason,
             "rows_accepted": p.rows_accepted, "rows_rejected": p.rows_rejected}
            for p in st.record.points
        ]  # fmt: skip
        return Table(
            "jobs",
            f"Points of job {st.id}",
            pl.DataFrame(rows, infer_schema_length=None),
            {"elapsed_s": "s"},
        )
    job_rows: list[dict[str, object]] = [
        {"job": st.id, "plan": st.record.plan.name, "backend": st.record.backend, "state": st.state.value,
         "done": st.done, "total": st.total, "created_at": st.record.created_at, "run_id": st.record.run_id}
        for st in service.list_jobs(store)
    ]  # fmt: skip
    schema: dict[str, pl.DataType] = {
        "job": pl.String(), "plan": pl.String(), "backend": pl.String(), "state": pl.String(),
        "done": pl.Int64(), "total": pl.Int64(), "created_at": pl.Datetime("us", "UTC"),
        "run_id": pl.String(),
    }  # fmt: skip
    return Table("jobs", "Jobs", pl.DataFrame(job_rows, schema=schema))
