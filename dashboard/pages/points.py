"""The points page, `/points?unofficialRun=<id>&<run-page filters>`: every column of every point."""

from __future__ import annotations

from typing import Any

from dash import html

from dashboard import components as c
from dashboard import urls
from dashboard.context import AppContext
from dashboard.ids import Id
from dashboard.pages import missing
from dashboard.state import RunView
from dashboard.tables import run_table


def layout(app: AppContext, query: str) -> Any:
    """The full points table of a run view, with its verdicts."""
    view, notes = RunView.parse(query)
    if not view.runs:
        return missing.no_run()
    data = app.source.run_data(view)
    if len(data.missing) == len(view.runs):
        return missing.layout(app, view)
    table = run_table(data, "points")
    title = f"{table.frame.height} points of run{'s' if len(view.runs) > 1 else ''} {', '.join(view.runs)}"
    return html.Div(
        [
            c.notes([*notes, *(f"run {r} is not in the store" for r in data.missing)]),
            html.Div(
                [
                    html.Div(
                        [
                            html.H2(title),
                            c.export_links("points", view.query()),
                            html.A("← run page", href=urls.run(view)),
                        ],
                        className="section-head",
                    ),
                    html.Div(
                        f"verdicts on {view.x} vs {view.y}; filters of the run page apply",
                        className="muted small",
                    ),
                    c.grid(Id.ALL_POINTS_GRID, table, height=720),
                ],
                className="card",
            ),
        ]
    )
