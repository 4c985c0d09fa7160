"""HTTP routes outside Dash: exports of every table, the pruned list, and the state-changing API.

`/export/<table>.<fmt>?<the page's own query string>` answers CSV, JSON, Parquet and markdown (`.md`)
for every table (and YAML / the CLI line for the pruned list), from the same `RunData` the page
draws: `views.exports.export_body`, the registry of exportable tables rendered by the one
renderer registry (`analysis.render`), which `paretolens table` prints too. This module is the one
place that turns exceptions into HTTP responses: JSON for `.json` and `/api/` requests,
plain text otherwise; no traceback, no request data, no token ever reaches a response or a log.
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Callable, Collection
from typing import Any

from dash.exceptions import DependencyException
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge
from werkzeug.wrappers import Response as BaseResponse

from dashboard import auth, launching
from dashboard.fetch import Fetcher
from dashboard.forged import CALLBACK_PATH, malformed_callback
from dashboard.settings import AppSettings
from ingest.defaults import check_defaults, split_run_keys
from ingest.errors import SchemaError
from runner import service
from runner.errors import JobNotFound, LaunchRefused, RunnerError
from views import urls
from views.exports import ExportError, export_body
from views.query.state import JobsView, RunView
from views.source import DataSource
from views.unknown_runs import not_found_text, requested_runs

log = logging.getLogger("paretolens.dashboard")

__all__ = [
    "LAUNCH_FIELDS",
    "MAX_LOGGED_CHARS",
    "MAX_MESSAGE_CHARS",
    "error_response",
    "export_response",
    "log_unexpected",
    "not_found_guard",
    "register_routes",
]

# The fields of a launch request: what to run is chosen here, how to run it is not.
LAUNCH_FIELDS = (
    "query",
    "source",
    "points",
    "backend",
    "options",
    *launching.BROWSER_FIELDS,
    "token",
)


def export_response(source: DataSource, filename: str, query: str) -> Response:
    """The response of `/export/<filename>?<query>` (`export_body` as an attachment).

    Raises:
        ExportError: unknown table or format, or a query that names no run.
    """
    out = export_body(source, filename, query)
    resp = Response(out.body, content_type=out.content_type)
    resp.headers["Content-Disposition"] = f'attachment; filename="{out.filename}"'
    return resp


def not_found_guard(server: Flask, pages: Callable[[], Collection[str]]) -> None:
    """Answer 404 (the page still says "Not found") for a path that is no page of the app:
    Dash serves its page shell at every path, which would answer 200."""

    @server.after_request
    def _status(resp: Response) -> Response:
        rule = request.url_rule.rule if request.url_rule is not None else ""
        if (
            resp.status_code == 200
            and request.method == "GET"
            and rule.endswith("<path:path>")
            and "/_dash" not in rule
            and (request.path.rstrip("/") or "/") not in pages()
        ):
            resp.status_code = 404
        return resp


def unknown_runs_guard(server: Flask, have: Callable[[], Collection[str]]) -> None:
    """Answer 404 for a page whose query names a run the store does not have or an id that is
    no run id (the page itself says so, in `unknown_runs.not_found_text`'s words)."""

    @server.after_request
    def _status(resp: Response) -> Response:
        rule = request.url_rule.rule if request.url_rule is not None else ""
        if resp.status_code == 200 and request.method == "GET" and rule.endswith("<path:path>"):
            query = request.query_string.decode("utf-8", "replace")
            runs = requested_runs(request.path.rstrip("/") or "/", query)
            if runs and not_found_text(runs, have()) is not None:
                resp.status_code = 404
        return resp


# ---- routes --------------------------------------------------------------------------------


# The longest error message answered, and the most of a request or an exception a log record
# carries: one request never writes more than a few kB to the log.
MAX_MESSAGE_CHARS = 500
MAX_LOGGED_CHARS = 200
MAX_TRACEBACK_CHARS = 6000


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def error_response(status: int, message: str) -> Response:
    """An error as JSON (`.json` and `/api/` requests) or plain text; the message is capped."""
    message = _short(message, MAX_MESSAGE_CHARS)
    wants_json = request.path.endswith(".json") or request.path.startswith(urls.API_PREFIX)
    if wants_json:
        body = json.dumps({"error": message, "status": status}) + "\n"
        return Response(body, status=status, content_type="application/json")
    return Response(message + "\n", status=status, content_type="text/plain; charset=utf-8")


_error = error_response


def log_unexpected(exc: BaseException) -> None:
    """Log an unexpected exception with its traceback, capped: the method, the path (cut), the
    exception's type and message (cut) and the frames (source lines, no values)."""
    frames = "".join(traceback.format_tb(exc.__traceback__))
    if len(frames) > MAX_TRACEBACK_CHARS:
        frames = "...\n" + frames[-MAX_TRACEBACK_CHARS:]
    log.error(
        "unexpected error on %s %s: %s: %s\n%s",
        request.method,
        _short(request.path, MAX_LOGGED_CHARS),
        type(exc).__name__,
        _short(str(exc), MAX_LOGGED_CHARS),
        frames,
    )


def register_routes(
    server: Flask,
    source: DataSource,
    settings: AppSettings,
    fetcher: Fetcher,
    throttle: auth.Throttle | None = None,
    callback_map: dict[str, Any] | None = None,
) -> None:
    """Add the export and API routes and the one error handler to the Flask server
    (`callback_map`: the Dash app's, to tell a forged callback request from a bug)."""
    throttle = throttle or auth.Throttle()

    def token() -> str | None:
        """The request's token, after the wrong-token throttle has seen it."""
        supplied = auth.request_token(request)
        throttle.guard(settings, supplied, request.remote_addr)
        return supplied

    @server.get(f"{urls.EXPORT_PREFIX}<path:filename>")
    def export(filename: str) -> Response:
        return export_response(source, filename, request.query_string.decode("utf-8", "replace"))

    @server.post(f"{urls.API_PREFIX}fetch/<run_id>")
    def fetch(run_id: str) -> Response:
        auth.authorize_fetch(settings, token())
        return _json(fetcher.start(run_id, _fetch_defaults()).snapshot(), 202)

    def _fetch_defaults() -> dict[str, Any]:
        """What no file says, as `paretolens fetch --set`: a JSON `{"set": {column: value}}`
        or form fields `set=COLUMN=VALUE`; run keys (title, branch, ...) included."""
        if request.is_json:
            doc = request.get_json(silent=True) or {}
            given = doc.get("set") if isinstance(doc, dict) else None
            pairs = given if isinstance(given, dict) else {}
        else:
            pairs = {}
            for item in request.form.getlist("set"):
                key, sep, value = item.partition("=")
                if not sep:
                    raise ExportError(400, f"set {item!r}: expected COLUMN=VALUE, e.g. hw=h200")
                pairs[key.strip()] = value.strip()
        try:
            # Run keys (title, branch, ...) as `paretolens fetch --set` takes them.
            points, run = split_run_keys({str(k): v for k, v in pairs.items()})
            return {**check_defaults(points), **run}
        except SchemaError as exc:
            raise ExportError(400, f"set {exc.field}: {exc.reason}") from exc

    @server.get(f"{urls.API_PREFIX}fetch/<run_id>/status")
    def fetch_status(run_id: str) -> Response:
        job = fetcher.status(run_id)
        if job is None:
            raise ExportError(404, f"no fetch of run {run_id} has been started")
        return _json(job.snapshot())

    @server.post(urls.api_launch())
    def launch() -> Response:
        form = request.get_json(silent=True) if request.is_json else request.form
        form = form or {}
        supplied = token()
        service.authorize(settings, supplied, caller=service.Caller.WEB)
        # The browser sends no programs: a request with a command (or any field the API does
        # not take) is refused before anything else is read (docs/runner.md).
        launching.refuse_extra_fields(form, LAUNCH_FIELDS)
        view, _ = RunView.parse(str(form.get("query", "")))
        if not view.runs:
            raise ExportError(400, "no run: send query=<the run page's query string>")
        options = form.get("options", "")
        durations = {k: form[k] for k in launching.BROWSER_FIELDS if form.get(k) not in (None, "")}
        if durations:
            options = {**launching.parse_options(str(options or "")), **durations}
        job = launching.launch_from_view(
            source,
            settings,
            view,
            what="points" if form.get("source") == "points" else "pruned",
            point_ids=[p for p in str(form.get("points", "")).split(",") if p],
            backend=str(form.get("backend", "local")),
            options=options if isinstance(options, dict) else str(options),
            token=supplied,
        )
        return _json({"job": job, "url": urls.jobs(JobsView(job=job))}, 202)

    @server.post(f"{urls.API_PREFIX}jobs/<job_id>/cancel")
    def cancel(job_id: str) -> Response:
        st = service.cancel_job(source.store, job_id, settings, token=token())
        return _json({"job": st.id, "state": st.state.value})

    @server.errorhandler(ExportError)
    def on_export_error(exc: ExportError) -> Response:
        return _error(exc.status, str(exc))

    @server.errorhandler(auth.AuthError)
    @server.errorhandler(LaunchRefused)
    def on_refused(exc: Exception) -> Response:
        if isinstance(exc, auth.Throttled):
            resp = _error(429, str(exc))
            resp.headers["Retry-After"] = str(exc.retry_after)
            return resp
        return _error(403, str(exc))

    @server.errorhandler(DependencyException)
    def on_unknown_asset(exc: DependencyException) -> Response:
        # Dash's component-suite route: an unknown library or path ('../' included).
        return _error(404, "no such file")

    @server.errorhandler(RequestEntityTooLarge)
    def on_too_large(exc: RequestEntityTooLarge) -> Response:
        limit = server.config.get("MAX_CONTENT_LENGTH")
        return _error(413, f"the request body is over the {limit} byte limit")

    @server.errorhandler(JobNotFound)
    def on_missing_job(exc: JobNotFound) -> Response:
        return _error(404, str(exc))

    @server.errorhandler(RunnerError)
    @server.errorhandler(ValueError)
    def on_bad_request(exc: Exception) -> Response:
        return _error(400, str(exc))

    @server.errorhandler(Exception)
    def on_unexpected(exc: Exception) -> BaseResponse:
        if isinstance(exc, HTTPException) and exc.code:
            return exc.get_response()  # werkzeug HTTP errors
        if callback_map is not None and request.path.endswith(CALLBACK_PATH):
            wrong = malformed_callback(callback_map, request.get_json(silent=True))
            if wrong is not None:  # a forged request: the client's fault, one short log line
                log.warning("malformed callback request: %s", wrong[:200])
                return _error(400, f"malformed callback request: {wrong}")
        log_unexpected(exc)
        return _error(500, "internal error; the server log names the exception")


def _json(doc: dict[str, Any], status: int = 200) -> Response:
    return Response(json.dumps(doc) + "\n", status=status, content_type="application/json")
