"""The launch panel of the run page: run the full sweep on the pruned list or on chosen points."""

from __future__ import annotations

from typing import Any

from dash import ALL, Dash, Input, Output, State, dcc, html

from dashboard.auth import AuthError, as_token, client_address
from dashboard.context import AppContext
from dashboard.ids import Id, control
from dashboard.launching import (
    LaunchRequestError,
    default_options,
    describe_options,
    launch_from_view,
    load_options,
)
from runner.errors import RunnerError
from runner.plan import BACKENDS
from runner.service import get_job, is_loopback
from views import urls
from views.query.state import JobsView, RunView
from views.run_data import RunData


def launch_state(app: AppContext) -> tuple[bool, str]:
    """Whether the panel is usable, and why not."""
    s = app.settings
    if not s.launch_enabled:
        return (
            False,
            "Launching is off. Start the server with PARETOLENS_LAUNCH_ENABLED=true and PARETOLENS_TOKEN=<secret> to enable it.",
        )
    if s.token is None and not is_loopback(s.host):
        return (
            False,
            f"Launching is refused: the server listens on {s.host}, beyond localhost, and no PARETOLENS_TOKEN is set.",
        )
    return True, "Launching needs the app token (PARETOLENS_TOKEN) when one is set."


def panel(app: AppContext, data: RunData, view: RunView) -> list[Any]:
    """The launch form (disabled, with the reason, unless launching is configured)."""
    enabled, why = launch_state(app)
    n_kept = data.pruned.kept.height
    form = html.Div(
        [
            html.Div(
                [
                    html.Label("What to run"),
                    dcc.RadioItems(
                        id=Id.LAUNCH_SOURCE,
                        options=[
                            {"label": f"the pruned list ({n_kept} points)", "value": "pruned"},
                            {"label": "the points ticked in the Points tab", "value": "points"},
                        ],
                        value="pruned",
                    ),
                ],
                className="control",
            ),
            html.Div(
                [
                    html.Label("Backend"),
                    dcc.Dropdown(
                        id=Id.LAUNCH_BACKEND, options=list(BACKENDS), value="local", clearable=False
                    ),
                ],
                className="control",
            ),
            html.Div(
                [
                    html.Label("Token"),
                    dcc.Input(
                        id=Id.LAUNCH_TOKEN,
                        type="password",
                        autoComplete="off",
                        placeholder="PARETOLENS_TOKEN",
                    ),
                ],
                className="control",
            ),
            html.Button(
                "Launch", id=Id.LAUNCH_BUTTON, className="btn primary", disabled=not enabled
            ),
        ],
        className="inline-form",
    )
    return [
        html.Div(why, className="notes" if not enabled else "muted small"),
        form,
        html.Div(
            [
                html.Label("Durations (YAML: duration_s, timeout_s)", className="control-label"),
                html.Div(describe_options(app.settings), className="muted small"),
                dcc.Textarea(
                    id=Id.LAUNCH_OPTIONS,
                    value=default_options(app.settings),
                    style={
                        "width": "100%",
                        "height": "60px",
                        "fontFamily": "monospace",
                        "fontSize": "12px",
                    },
                ),
            ]
        ),
        # says "queued" the moment Launch is pressed (the callback's `running`), before the
        # server has answered; its line is reserved, so nothing below moves
        html.Div(id=Id.LAUNCH_STATUS, role="status", className="small launch-status"),
        html.Div(id=Id.LAUNCH_RESULT),
        html.Div(html.A("all jobs →", href=urls.jobs()), className="small"),
    ]


# What the panel says while the launch request is on its way (shown by the browser at once).
QUEUED = "Queued: sending the launch to the server, then its job's progress appears here…"


def register(dash_app: Dash, app: AppContext) -> None:
    """The launch button. The server's launch options document is validated here, at start-up.

    Raises:
        LaunchOptionsError: when launching is enabled and the options document is invalid.
    """
    if app.settings.launch_enabled:
        load_options(app.settings)

    dash_app.callback(
        Output(Id.LAUNCH_RESULT, "children"), Output(Id.LAUNCH_TOKEN, "value"),
        Input(Id.LAUNCH_BUTTON, "n_clicks"),
        State(Id.LAUNCH_SOURCE, "value"), State(Id.LAUNCH_BACKEND, "value"), State(Id.LAUNCH_OPTIONS, "value"),
        State(Id.LAUNCH_TOKEN, "value"), State(Id.POINTS_GRID, "selectedRows"), State(control(ALL), "value"),
        State(control(ALL), "id"), prevent_initial_call=True,
        running=[
            (Output(Id.LAUNCH_STATUS, "children"), QUEUED, ""),
            (Output(Id.LAUNCH_BUTTON, "disabled"), True, False),
        ],
    )(LaunchCallbacks(app).on_launch)  # fmt: skip


class LaunchCallbacks:
    """The launch button as a plain method."""

    def __init__(self, app: AppContext) -> None:
        self.app = app

    def on_launch(
        self, _n: int, what: str, backend: str, options: str, token: str | None,
        selected: list[dict[str, Any]] | None, values: list[Any], ids: list[dict[str, Any]],
    ) -> tuple[Any, str]:  # fmt: skip
        """Launch, then clear the token field; a refusal says why. Every value is checked for
        its type first: a forged callback can send anything in any field."""
        try:
            self.app.throttle.guard(self.app.settings, token, client_address())
            if not (
                isinstance(values, list)
                and isinstance(ids, list)
                and all(isinstance(i, dict) for i in ids)
            ):
                raise ValueError("malformed controls")
            controls = {i.get("field"): v for i, v in zip(ids, values, strict=True)}
            view, _ = RunView.from_controls({str(k): v for k, v in controls.items()})
            rows = selected if isinstance(selected, list) else []
            points = [str(r.get("point_id")) for r in rows if isinstance(r, dict)]
            job = launch_from_view(
                self.app.source,
                self.app.settings,
                view,
                what="points" if what == "points" else "pruned",
                point_ids=points,
                backend=backend if isinstance(backend, str) else "local",
                options=options if isinstance(options, str) else "",
                token=as_token(token),
            )
        except LaunchRequestError:
            # A callback that carries a command was not sent by this panel: the server's error
            # handler answers it with HTTP 400 and the reason (docs/runner.md).
            raise
        except (RunnerError, ValueError, TypeError, AuthError) as exc:
            return html.Div(f"Not launched: {str(exc)[:500]}", className="notes"), ""
        st = get_job(self.app.source.store, job)
        progress = f"{st.state.value} · {st.done}/{st.total} points done"
        return html.Div(
            [
                "Launched job ",
                html.A(job, href=urls.jobs(JobsView(job=job))),
                f": {progress} (the jobs page follows it point by point).",
            ],
            className="small",
        ), ""
