"""The run pickers' options, served by search (issue 26, item 5).

A store of a team's whole history holds thousands of runs: listing every one in each picker made
the compare page's layout 1.4 MB, 0.54 MB of it the two run pickers. A picker's layout holds the
selected runs and the newest `RECENT` only; what the user types is sent to the server
(`search_value`), which answers with the runs whose id, title or branch contain it (at most
`FOUND`), always keeping the selected ones, so a chosen run never loses its label.

One helper for every picker that lists the store's runs: the compare page's base and candidate,
the run page's overlay runs and baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl
from dash import Dash, Input, Output, State

from dashboard.context import AppContext
from ingest.contract.schema import RunCol

RECENT = 50
"""Runs a picker's layout lists besides the selected ones: the newest of the catalog."""

FOUND = 50
"""Runs a search answers with at most (besides the selected ones)."""

_LABEL = 90
_COLS = (RunCol.RUN_ID, RunCol.TITLE, RunCol.BRANCH)


def _option(rid: Any, title: Any, branch: Any) -> dict[str, str]:
    about = title or branch
    full = f"{rid} — {about}" if about else str(rid)
    out = {"label": full[:_LABEL], "value": str(rid)}
    # the dropdown filters what it shows by label, and by `search` when an option has one: give
    # the branch (and a title cut from the label) so that what found the run on the server shows
    words = " ".join(str(w) for w in (rid, title, branch) if w)
    if any(w and str(w) not in out["label"] for w in (title, branch)):
        out["search"] = words
    return out


def _options(rows: pl.DataFrame, selected: Sequence[str]) -> list[dict[str, str]]:
    out = [_option(*row) for row in rows.select(*_COLS).iter_rows()]
    have = {o["value"] for o in out}
    return out + [{"label": f"{r} (not in store)", "value": r} for r in selected if r not in have]


def _picked(catalog: pl.DataFrame, selected: Sequence[str]) -> pl.DataFrame:
    return catalog.filter(pl.col(RunCol.RUN_ID).is_in(list(selected)))


def run_options(
    catalog: pl.DataFrame, selected: Sequence[str], *, limit: int | None = None
) -> list[dict[str, str]]:
    """A picker's options in the layout: the newest `limit` runs of the catalog (which is sorted
    newest first), then the selected runs not among them (a run not in the store says so)."""
    recent = catalog.head(RECENT if limit is None else limit)
    older = _picked(catalog, [r for r in selected if r not in set(recent[RunCol.RUN_ID])])
    return _options(pl.concat([recent, older], how="vertical_relaxed"), selected)


def search_options(
    catalog: pl.DataFrame, search: str, selected: Sequence[str], *, limit: int | None = None
) -> list[dict[str, str]]:
    """The runs whose id, title or branch contain `search` (any case), newest first, at most
    `limit`, then the selected runs not among them; an empty search gives `run_options`."""
    text = search.strip().lower()
    if not text:
        return run_options(catalog, selected)
    hit = pl.any_horizontal(
        pl.col(c).cast(pl.String).fill_null("").str.to_lowercase().str.contains(text, literal=True)
        for c in _COLS
    )
    found = catalog.filter(hit).head(FOUND if limit is None else limit)
    older = _picked(catalog, [r for r in selected if r not in set(found[RunCol.RUN_ID])])
    return _options(pl.concat([found, older], how="vertical_relaxed"), selected)


def _values(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def register_search(
    dash_app: Dash,
    app: AppContext,
    picker: dict[str, Any],
    first: Sequence[dict[str, str]] = (),
) -> None:
    """Serve the options of the run picker with id `picker` by what the user types; `first`
    (e.g. the "main" choice) leads every answer."""

    def on_search(search: str | None, value: Any) -> list[dict[str, str]]:
        selected = [v for v in _values(value) if v not in {o["value"] for o in first}]
        return [*first, *search_options(app.source.catalog(), search or "", selected)]

    dash_app.callback(
        Output(picker, "options"),
        Input(picker, "search_value"),
        State(picker, "value"),
        prevent_initial_call=True,
    )(on_search)
