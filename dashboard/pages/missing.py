"""A run page whose runs are not in the store: fetch from GitHub with progress, or say how to
ingest them. Also the page for `/inference` without a run id."""

from __future__ import annotations

from typing import Any

from dash import ClientsideFunction, Dash, Input, Output, State, dcc, html, no_update

from dashboard import auth
from dashboard.auth import AuthError
from dashboard.context import AppContext
from dashboard.ids import Id
from ingest.contract.schema import RunCol
from views import urls
from views.query.state import RunView
from views.unknown_runs import not_found_text


def _how_to(app: AppContext, run_ids: tuple[str, ...]) -> html.Div:
    store = str(app.source.store.root)
    first = run_ids[0]
    return html.Div(
        [
            html.H4("How to ingest it"),
            html.P("From a GitHub Actions run (needs GITHUB_TOKEN to read its artifacts):"),
            html.Pre(f"paretolens fetch {first} --store {store}"),
            html.P("From files you already have (a directory, a zip or downloaded artifacts):"),
            html.Pre(f"paretolens ingest PATH --run-id {first} --store {store}"),
            html.P(
                "Then reload this page. To let this page fetch runs itself, start the server with GITHUB_TOKEN set."
            ),
        ]
    )


def _known_runs(app: AppContext) -> html.Div:
    cat = app.source.catalog().head(12)
    if cat.height == 0:
        return html.Div("The store has no runs yet.", className="muted")
    items = [
        html.Li(
            html.A(
                " — ".join(str(v) for v in (r[RunCol.RUN_ID], r[RunCol.TITLE]) if v),
                href=urls.runs(str(r[RunCol.RUN_ID])),
            )
        )
        for r in cat.iter_rows(named=True)
    ]
    return html.Div(
        [html.H4("Runs in the store"), html.Ul(items), html.A("all runs →", href=urls.index())]
    )


def not_found(text: str) -> html.Div:
    """A page that names ids that are no run ids (404, `unknown_runs.not_found_text`)."""
    return html.Div(
        [html.H2("Not found"), html.P(f"Not found: {text}.", className="not-found")],
        className="card",
    )


def layout(app: AppContext, view: RunView) -> html.Div:
    """The page of runs that are not in the store."""
    ids = view.runs
    policy = auth.fetch_policy(app.settings)
    fetchable = [r for r in ids if r.isdigit()]
    text = not_found_text(ids, ())
    title = html.Div(
        [
            html.H2(f"Run{'s' if len(ids) > 1 else ''} {', '.join(ids)} not in the store"),
            html.P(f"Not found: {text}.", className="not-found"),
        ]
    )
    if policy.mode == "off" or not fetchable:
        why = policy.reason if fetchable else "only GitHub Actions run ids (digits) can be fetched"
        return html.Div(
            [
                title,
                html.P(f"This page cannot fetch it: {why}."),
                _how_to(app, ids),
                _known_runs(app),
            ],
            className="card",
        )
    form: list[Any] = []
    if policy.mode == "token":
        form = [
            html.Div(
                [
                    html.Label("App token (PARETOLENS_TOKEN)"),
                    dcc.Input(id=Id.FETCH_TOKEN, type="password", autoComplete="off"),
                ],
                className="control",
            ),
            html.Button("Fetch from GitHub", id=Id.FETCH_BUTTON, className="btn primary"),
        ]
    else:
        form = [
            dcc.Input(id=Id.FETCH_TOKEN, type="hidden", value=""),
            html.Button(
                "Fetch from GitHub",
                id=Id.FETCH_BUTTON,
                className="btn primary",
                n_clicks=1,
                style={"display": "none"},
            ),
        ]
    return html.Div(
        [
            title,
            html.P(
                f"Fetching {', '.join(fetchable)} from {app.settings.github_repo} on GitHub and ingesting it into {app.source.store.root}."
            ),
            html.Div(form, className="inline-form"),
            dcc.Store(id=Id.FETCH_RUNS, data=list(fetchable)),
            dcc.Store(id=Id.FETCH_STATE, data=""),
            dcc.Interval(id=Id.FETCH_TICK, interval=1000, disabled=True),
            html.Pre("", id=Id.FETCH_LOG),
            _how_to(app, ids),
        ],
        className="card",
    )


def no_run() -> html.Div:
    """`/inference` without a run id."""
    return html.Div(
        [
            html.H2("No run id"),
            html.P(
                [
                    "Open a run as ",
                    html.Code("/inference?unofficialRun=<run id>"),
                    " (several: comma-separated), or pick one on the ",
                    html.A("runs page", href=urls.index()),
                    ".",
                ]
            ),
        ],
        className="card",
    )


class FetchCallbacks:
    """Start fetches and report their progress (plain methods)."""

    def __init__(self, app: AppContext) -> None:
        self.app = app

    def on_start(self, clicks: int | None, runs: list[str], token: str | None) -> tuple[Any, ...]:
        """The fetch button (clicked on its own in auto mode): check the policy, start."""
        if not clicks:
            return no_update, no_update, no_update
        try:
            self.app.throttle.guard(self.app.settings, token, auth.client_address())
            auth.authorize_fetch(self.app.settings, auth.as_token(token))
        except AuthError as exc:
            return f"refused: {exc}", True, "refused"
        for r in runs if isinstance(runs, list) else []:
            if isinstance(r, str):
                self.app.fetcher.start(r)
        return "starting…", False, "running"

    def on_tick(self, _n: int, runs: list[str]) -> tuple[Any, ...]:
        """Progress lines; stop polling and reload once every fetch is over."""
        jobs = [j for j in (self.app.fetcher.status(r) for r in runs) if j is not None]
        if not jobs:
            return no_update, no_update, no_update
        lines = [f"[{j.run_id}] {line}" for j in jobs for line in j.lines]
        lines += [f"[{j.run_id}] failed: {j.error}" for j in jobs if j.state == "failed"]
        states = {j.state for j in jobs}
        done = "running" if "running" in states else "failed" if "failed" in states else "done"
        return "\n".join(lines) or "starting…", done != "running", done


def register(dash_app: Dash, app: AppContext) -> None:
    """Register the fetch callbacks."""
    cb = FetchCallbacks(app)
    outputs = (
        Output(Id.FETCH_LOG, "children", allow_duplicate=True),
        Output(Id.FETCH_TICK, "disabled", allow_duplicate=True),
        Output(Id.FETCH_STATE, "data", allow_duplicate=True),
    )
    dash_app.callback(
        *outputs,
        Input(Id.FETCH_BUTTON, "n_clicks"),
        State(Id.FETCH_RUNS, "data"),
        State(Id.FETCH_TOKEN, "value"),
        prevent_initial_call="initial_duplicate",
    )(cb.on_start)
    dash_app.callback(
        *outputs,
        Input(Id.FETCH_TICK, "n_intervals"),
        State(Id.FETCH_RUNS, "data"),
        prevent_initial_call=True,
    )(cb.on_tick)
    dash_app.clientside_callback(
        ClientsideFunction("paretolens", "reload"),
        Output(Id.FETCH_LOG, "title"),
        Input(Id.FETCH_STATE, "data"),
        prevent_initial_call=True,
    )
