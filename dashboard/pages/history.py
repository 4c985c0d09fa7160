"""The history page, `/history?arm=<id>[,<id>]&at=<x>&x=&y=` (issue 14, item 4): one
configuration (or a set of arms) followed across runs in time.

Each run's arm frontier is read at x = `at` (`analysis.comparison.history.arm_history`: PCHIP between the
measured points, never extrapolated; a run whose frontier does not reach x says its range). The
chart draws y per run in date order, one line per arm; the table links every run to its page;
`/export/history.csv?<the same query>` is the same table.
"""

from __future__ import annotations

from typing import Any

import polars as pl
from dash import dcc, html

from dashboard import components as c
from dashboard.context import AppContext
from dashboard.figures import style
from dashboard.ids import Id
from dashboard.pages.run_panels import GRAPH_CONFIG
from ingest.contract.col import Col
from ingest.contract.schema import SPECS, RunCol
from views import urls
from views.query.choices import PALETTE_CHOICES
from views.query.state import HistoryView, RunView
from views.tables import history_changelog, history_table


def _run_label(r: dict[str, Any]) -> str:
    return f"{str(r['date'] or '')[:10]} · {r[Col.RUN_ID]}"


def _pr(entry: dict[str, Any]) -> str:
    link = str(entry.get("pr_link") or "")
    tail = link.rstrip("/").rsplit("/", 1)[-1]
    return f"PR {tail}" if tail.isdigit() else "changelog"


def changelog_marks(fig: style.Figure, changelog: list[dict[str, Any]]) -> style.Figure:
    """A dashed line at each run whose changelog names one of the arms, labelled with its PR
    and the description on hover (issue 27)."""
    shapes, notes = [], []
    for entry in changelog:
        if not entry.get("arms"):
            continue
        x = _run_label(entry)
        shapes.append(
            {
                "type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
                "line": {"color": "#555", "width": 1, "dash": "dash"},
            }
        )  # fmt: skip
        text = "<br>".join(style.inert(d) for d in entry.get("description", []))
        notes.append(
            {
                "x": x, "xref": "x", "y": 1, "yref": "paper", "yanchor": "bottom",
                "text": style.inert(_pr(entry)), "showarrow": False, "font": {"size": 10},
                "hovertext": f"{style.inert(', '.join(entry['arms']))}:<br>{text}",
                "name": "changelog",
            }
        )  # fmt: skip
    fig["layout"]["shapes"] = [*fig["layout"].get("shapes", []), *shapes]
    fig["layout"]["annotations"] = [*fig["layout"].get("annotations", []), *notes]
    return fig


def changelog_list(changelog: list[dict[str, Any]]) -> Any:
    """Every changelog entry of the runs shown, the arms it names first marked."""
    if not changelog:
        return html.Div(
            "No changelog for these runs (ingest a run's changelog-metadata artifact to mark its "
            "configuration changes here).",
            className="muted small",
        )
    items = []
    for e in changelog:
        link = urls.safe_href(e.get("pr_link"))
        head: list[Any] = [html.B(_run_label(e)), " "]
        head.append(
            html.A(_pr(e), href=link, target="_blank", rel="noopener noreferrer")
            if link
            else _pr(e)
        )
        head.append(f" · {', '.join(e['arms'])}" if e["arms"] else " · none of these arms")
        items.append(
            html.Li([*head, html.Ul([html.Li(d) for d in e.get("description", [])])],
                    className="changelog-entry" + (" marked" if e["arms"] else ""))
        )  # fmt: skip
    return html.Div([html.H4("Changelog of these runs"), html.Ul(items)], id=Id.HISTORY_CHANGELOG)


def history_figure(frame: pl.DataFrame, view: HistoryView) -> style.Figure:
    """y at x per run, in date order (a category axis: one tick per run), one line per arm."""
    rows = frame.to_dicts()
    order = list(dict.fromkeys(_run_label(r) for r in rows))
    uy = SPECS[Col(view.y)].unit
    traces = []
    arms = list(dict.fromkeys((str(r[Col.ARM_ID]), str(r[Col.ARM_LABEL])) for r in rows))
    for i, (arm, label) in enumerate(arms):
        mine = [r for r in rows if str(r[Col.ARM_ID]) == arm]
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": [_run_label(r) for r in mine],
                "y": [r["y"] for r in mine],
                "name": style.inert(f"{label} · {arm}" if len(arms) > 1 else label),
                "connectgaps": False,
                "marker": {"color": style.arm_color(i), "size": 9},
                "line": {"color": style.arm_color(i), "width": 2},
                "customdata": [
                    [
                        style.inert(r[Col.RUN_ID]),
                        style.inert(r[RunCol.BRANCH] or ""),
                        style.inert(str(r[RunCol.HEAD_SHA] or "")[:10]),
                        r["points"],
                    ]
                    for r in mine
                ],
                "hovertemplate": (
                    "run %{customdata[0]} · branch %{customdata[1]} · sha %{customdata[2]}<br>"
                    f"{view.y}: %{{y:.5g}} {uy} at {view.x} = {view.at:g}<br>"
                    "%{customdata[3]} points of the arm<extra></extra>"
                ),
            }
        )
    layout = style.base_layout(
        f"{style.axis_title(view.y).split(' (')[0]} at {view.x} = {view.at:g}, run by run",
        view.x,
        view.y,
        False,
        False,
        revision=view.query(),
    )
    layout["xaxis"].update(
        type="category",
        title={"text": "run (oldest first)"},
        categoryorder="array",
        categoryarray=order,
    )
    layout["legend"]["title"]["text"] = "Arms"
    return style.repaint({"data": traces, "layout": layout}, view.palette)


def palette_links(view: HistoryView) -> Any:
    """The palettes as links to this page in each (the URL is the state; the current one bold)."""
    links: list[Any] = ["Colours: "]
    for i, (value, title) in enumerate(PALETTE_CHOICES):
        here = value == view.palette
        links += [" · "] if i else []
        links.append(
            html.B(title) if here else html.A(title, href=urls.history(view.replace(palette=value)))
        )
    return html.Div(links, id=Id.HISTORY_PALETTE, className="muted small")


def _range(r: dict[str, Any]) -> str:
    if r["y"] is not None:
        return ""
    if r["x_lo"] is None:
        return "no frontier (every point invalid or past its cliff)"
    return f"outside its measured range ({r['x_lo']:.3g}–{r['x_hi']:.3g})"


def history_rows(frame: pl.DataFrame, view: HistoryView) -> html.Table:
    """The table, every run a link to its page (on the same axes, ranked at the same x)."""
    uy = SPECS[Col(view.y)].unit
    head = html.Tr(
        [html.Th(h) for h in ("date", "run", "branch", "sha", "arm", f"{view.y} ({uy})", "points")]
    )
    body = []
    for r in frame.iter_rows(named=True):
        rv = RunView(
            runs=(str(r[Col.RUN_ID]),), x=view.x, y=view.y, at=view.at, palette=view.palette
        )
        if view.hwcost:
            rv = rv.replace(hwcost=view.hwcost)
        y = r["y"]
        body.append(
            html.Tr(
                [
                    html.Td(str(r["date"] or "")[:19]),
                    html.Td(html.A(str(r[Col.RUN_ID]), href=urls.run(rv))),
                    html.Td(str(r[RunCol.BRANCH] or "")),
                    html.Td(str(r[RunCol.HEAD_SHA] or "")[:10]),
                    html.Td(str(r[Col.ARM_LABEL] or r[Col.ARM_ID])),
                    html.Td(f"{y:,.2f}" if y is not None else _range(r)),
                    html.Td(str(r["points"])),
                ]
            )
        )
    return html.Table([head, *body], className="at-table", id=Id.HISTORY_TABLE)


def layout(app: AppContext, query: str) -> Any:
    """The history page of a query string."""
    view, notes = HistoryView.parse(query)
    head = html.H2("History of a configuration across runs")
    if not view.arm or view.at is None:
        return html.Div(
            [
                c.notes(notes),
                html.Div(
                    [
                        head,
                        html.P(
                            "Give the arms and the interactivity to read them at: "
                            "/history?arm=<arm id>[,<arm id>]&at=40 (x= and y= pick the plane). "
                            "The run page links here from its “rank arms at x” rows."
                        ),
                    ],
                    className="card",
                ),
            ]
        )
    table = history_table(app.source, view)
    frame = table.frame
    changelog = history_changelog(app.source, view, frame)
    if not frame.height:
        notes = [*notes, f"no run in the store has arm {', '.join(view.arm)}"]
    return html.Div(
        [
            c.notes(notes),
            html.Div(
                [
                    html.Div(
                        [head, c.export_links("history", view.query())], className="section-head"
                    ),
                    html.Div(
                        f"Each run's arm frontier of {view.y} read at {view.x} = {view.at:g} by "
                        "PCHIP between its measured points, never extrapolated; oldest first.",
                        className="muted small",
                    ),
                    palette_links(view),
                ],
                className="card",
            ),
            html.Div(
                dcc.Graph(
                    id=Id.HISTORY_CHART,
                    figure=changelog_marks(history_figure(frame, view), changelog),
                    config=GRAPH_CONFIG,
                    style={"height": "470px"},
                ),
                className="card chart-card",
            ),
            html.Div(history_rows(frame, view), className="card"),
            html.Div(changelog_list(changelog), className="card"),
        ]
    )
