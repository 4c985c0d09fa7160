"""The points page, `/points?unofficialRun=<id>&<run-page filters>`: every column of every point."""

from __future__ import annotations

from typing import Any

from dash import html

from dashboard import components as c
from dashboard.context import AppContext
from dashboard.ids import Id
from dashboard.pages import missing
from ingest.contract.col import Col
from views import urls
from views.query.state import RunView
from views.tables import KEY_POINT_COLUMNS, run_table
from views.unknown_runs import not_found_text

# What a reader looks at first: which configuration (identity) and how it did (headline
# metrics and the verdict), then every other column in the table's order.
OPENING = (
    *KEY_POINT_COLUMNS[:3],
    Col.MODEL_PREFIX,
    Col.SCENARIO,
    Col.ISL,
    Col.OSL,
    *KEY_POINT_COLUMNS[3:],
)


def opening_columns(frame: Any) -> list[str]:
    """The points page's column order: identity and headline metrics first, then the rest."""
    lead = list(dict.fromkeys(str(c) for c in OPENING if c in frame.columns))
    return lead + [c for c in frame.columns if c not in lead]


def layout(app: AppContext, query: str) -> Any:
    """The full points table of a run view, with its verdicts."""
    view, notes = RunView.parse(query)
    requested = RunView.requested_runs(query)
    if not view.runs:
        text = not_found_text(requested, ())
        return missing.not_found(text) if text else missing.no_run()
    data = app.source.run_data(view)
    if len(data.missing) == len(view.runs):
        return missing.layout(app, view)
    unknown = not_found_text(requested, set(app.source.store.run_ids()))
    notes = [*notes, *([f"Not found: {unknown}; the other runs are shown"] if unknown else [])]
    table = run_table(data, "points")
    title = f"{table.frame.height} points of run{'s' if len(view.runs) > 1 else ''} {', '.join(view.runs)}"
    return html.Div(
        [
            c.notes(notes),
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
                    c.grid(
                        Id.ALL_POINTS_GRID,
                        table,
                        opening_columns(table.frame),
                        height=720,
                        fit_columns=False,  # a hundred columns: sizing them moved the page
                    ),
                ],
                className="card",
            ),
        ]
    )
