"""The jobs page, `/jobs[?job=<id>&point=<id>&stream=stdout]`: live per-point state, elapsed time,
log tails, cancel."""

from __future__ import annotations

from typing import Any

from dash import Dash, Input, Output, State, dcc, html

from dashboard import components as c
from dashboard.auth import AuthError, as_token, client_address
from dashboard.context import AppContext
from dashboard.ids import Id
from runner import service
from runner.errors import JobNotFound, RunnerError
from runner.service import JobStatus
from views import urls
from views.query.choices import LOG_STREAMS
from views.query.state import JobsView


def _elapsed(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "–"


def jobs_table(statuses: list[JobStatus]) -> Any:
    """Every job, newest first."""
    if not statuses:
        return html.Div(
            "No jobs yet. Launch one from the Launch tab of a run page, or `paretolens launch PLAN`.",
            className="empty",
        )
    head = html.Tr(
        [
            html.Th(h)
            for h in (
                "job",
                "plan",
                "backend",
                "state",
                "points done",
                "by state",
                "created",
                "run",
            )
        ]
    )
    body = []
    for st in statuses:
        counts = ", ".join(f"{k.value} {v}" for k, v in st.counts().items() if v)
        body.append(
            html.Tr(
                [
                    html.Td(html.A(st.id, href=urls.jobs(JobsView(job=st.id)))),
                    html.Td(st.record.plan.name),
                    html.Td(st.record.backend),
                    html.Td(st.state.value, className=f"state-{st.state.value}"),
                    html.Td(f"{st.done}/{st.total}"),
                    html.Td(counts, className="small"),
                    html.Td(_when(st.record.created_at)),
                    html.Td(html.A(st.record.run_id, href=urls.runs(st.record.run_id))),
                ]
            )
        )
    return html.Table([head, *body], className="at-table")


def job_detail(app: AppContext, view: JobsView) -> Any:
    """One job: per-point state, elapsed time, exit, what was ingested, a log tail."""
    if not view.job:
        return html.Div("Pick a job to see its points and logs.", className="muted")
    try:
        st = service.get_job(app.source.store, view.job)
    except JobNotFound as exc:
        return html.Div(str(exc), className="notes")
    head = html.Tr(
        [
            html.Th(h)
            for h in (
                "point",
                "conc",
                "state",
                "attempt",
                "elapsed",
                "exit",
                "reason",
                "rows in/rejected",
                "log",
            )
        ]
    )
    rows = []
    for pt in st.record.points:
        rows.append(
            html.Tr(
                [
                    html.Td(pt.label),
                    html.Td(str(pt.conc)),
                    html.Td(pt.state.value, className=f"state-{pt.state.value}"),
                    html.Td(str(pt.attempt)),
                    html.Td(_elapsed(pt.elapsed_s())),
                    html.Td("–" if pt.exit_code is None else str(pt.exit_code)),
                    html.Td(pt.reason, className="small"),
                    html.Td(f"{pt.rows_accepted}/{pt.rows_rejected}"),
                    html.Td(html.A("log", href=urls.jobs(view.replace(point=pt.point_id)))),
                ]
            )
        )
    point = view.point or (st.record.points[0].point_id if st.record.points else None)
    log: list[Any] = []
    if point and point not in {p.point_id for p in st.record.points}:
        log = [html.Div(f"Job {st.id} has no point {point!r}.", className="notes")]
    elif point:
        links = [
            html.B(label)
            if s == view.stream
            else html.A(label, href=urls.jobs(view.replace(point=point, stream=s)))
            for s, label in LOG_STREAMS
        ]
        tail = service.log_tail(app.source.store, st.id, point, view.stream)  # type: ignore[arg-type]
        log = [
            html.H4(["Log of ", html.Code(point), f" ({view.stream}) "]),
            html.Span(links, className="small log-streams"),
            html.Pre(tail or "(empty so far)", id=Id.JOB_LOG),
        ]
    exports = c.export_links("jobs", JobsView(job=st.id).query(), label="Points")
    summary = f"{st.state.value} · {st.done}/{st.total} points done · backend {st.record.backend} · worker {'alive' if st.worker_alive else 'not running'}"
    return html.Div(
        [
            html.Div(
                [html.H3(f"Job {st.id}: {st.record.plan.name}"), exports], className="section-head"
            ),
            html.Div(
                [
                    summary,
                    " · results go to run ",
                    html.A(st.record.run_id, href=urls.runs(st.record.run_id)),
                ],
                className="small",
            ),
            html.Div(st.record.error, className="notes") if st.record.error else None,
            html.Table([head, *rows], className="at-table"),
            *log,
        ]
    )


def layout(app: AppContext, query: str) -> Any:
    """The jobs page."""
    view, _ = JobsView.parse(query)
    return html.Div(
        [
            dcc.Interval(id=Id.JOBS_TICK, interval=2000),
            html.Div(
                [
                    html.Div(
                        [html.H2("Jobs"), c.export_links("jobs", "")], className="section-head"
                    ),
                    html.Div(jobs_table(service.list_jobs(app.source.store)), id=Id.JOBS_TABLE),
                ],
                className="card",
            ),
            html.Div(
                [
                    html.Div(job_detail(app, view), id=Id.JOB_DETAIL),
                    html.Div(
                        [
                            html.Div(
                                [
                                    html.Label("Token"),
                                    dcc.Input(
                                        id=Id.CANCEL_TOKEN, type="password", autoComplete="off"
                                    ),
                                ],
                                className="control",
                            ),
                            html.Button("Cancel this job", id=Id.CANCEL_BUTTON, className="btn"),
                            html.Div(id=Id.CANCEL_RESULT),
                        ],
                        className="inline-form",
                        style={"marginTop": "10px", "display": "flex" if view.job else "none"},
                    ),
                ],
                className="card",
            ),
        ]
    )


class JobsCallbacks:
    """The jobs page's callbacks as plain methods."""

    def __init__(self, app: AppContext) -> None:
        self.app = app

    def on_tick(self, _n: int, search: str | None) -> tuple[Any, Any]:
        """Refresh the jobs list and the open job."""
        view, _ = JobsView.parse(search if isinstance(search, str) else "")
        return jobs_table(service.list_jobs(self.app.source.store)), job_detail(self.app, view)

    def on_cancel(self, _n: int, token: str | None, search: str | None) -> tuple[Any, str]:
        """Cancel the open job (the runner's gate decides), then clear the token field."""
        view, _ = JobsView.parse(search if isinstance(search, str) else "")
        try:
            self.app.throttle.guard(self.app.settings, token, client_address())
            st = service.cancel_job(
                self.app.source.store, view.job or "", self.app.settings, token=as_token(token)
            )
        except (RunnerError, AuthError) as exc:
            return html.Div(f"Not cancelled: {str(exc)[:500]}", className="notes"), ""
        return html.Div(f"Job {st.id} is {st.state.value}.", className="small"), ""


def register(dash_app: Dash, app: AppContext) -> None:
    """Live refresh and cancel."""
    cb = JobsCallbacks(app)
    dash_app.callback(
        Output(Id.JOBS_TABLE, "children"), Output(Id.JOB_DETAIL, "children"),
        Input(Id.JOBS_TICK, "n_intervals"), State(Id.LOCATION, "search"), prevent_initial_call=True,
    )(cb.on_tick)  # fmt: skip
    dash_app.callback(
        Output(Id.CANCEL_RESULT, "children"), Output(Id.CANCEL_TOKEN, "value"),
        Input(Id.CANCEL_BUTTON, "n_clicks"), State(Id.CANCEL_TOKEN, "value"), State(Id.LOCATION, "search"),
        prevent_initial_call=True,
    )(cb.on_cancel)  # fmt: skip
