"""HTTP routes outside Dash: exports of every table, the pruned list, and the state-changing API.

`/export/<table>.<fmt>?<the page's own query string>` answers CSV, JSON and Parquet for every table
(and YAML / the CLI line for the pruned list), from the same `RunData` the page draws. This module
is the one place that turns exceptions into HTTP responses: JSON for `.json` and `/api/` requests,
plain text otherwise; no traceback, no request data, no token ever reaches a response or a log.
"""

from __future__ import annotations

import io
import json
import logging
import re
import traceback
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from dash.exceptions import DependencyException
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge
from werkzeug.wrappers import Response as BaseResponse

from analysis import pruned_json
from analysis.tables import csv_text
from dashboard import auth, launching, urls
from dashboard.data import DataSource
from dashboard.fetch import Fetcher
from dashboard.settings import AppSettings
from dashboard.state import CompareView, HistoryView, IndexView, JobsView, RunView
from dashboard.tables import (
    COMPARE_TABLES,
    TABLES,
    Table,
    compare_table,
    history_table,
    index_table,
    jobs_table,
    run_table,
)
from ingest.errors import SchemaError
from ingest.pipeline import check_defaults
from runner import service
from runner.errors import JobNotFound, LaunchRefused, RunnerError

log = logging.getLogger("paretolens.dashboard")

CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "parquet": "application/vnd.apache.parquet",
    "yaml": "application/yaml; charset=utf-8",
    "txt": "text/plain; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
}


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


class ExportError(Exception):
    """A request the export routes cannot answer: the message says what was wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ---- serializers ---------------------------------------------------------------------------


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """Lists joined with ';' and NaN as empty, for CSV."""
    out = frame.with_columns(pl.col(pl.Float64, pl.Float32).fill_nan(None))
    lists = [c for c, t in out.schema.items() if isinstance(t, pl.List)]
    if lists:
        out = out.with_columns(
            pl.col(c).list.eval(pl.element().cast(pl.String)).list.join(";") for c in lists
        )
    return out


def to_csv(table: Table) -> str:
    """CSV with a unit in every header ('p99_ttft (s)'), written by the one CSV renderer
    (`analysis.tables.csv_text`: text a spreadsheet would run as a formula is neutralised)."""
    frame = _flat(table.frame)
    return csv_text(frame.rename({c: table.header(c) for c in frame.columns}))


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def to_json(table: Table, query: str) -> dict[str, Any]:
    """`{table, query, columns: [{name, unit, description}], rows: [...]}`."""
    frame = table.frame.with_columns(pl.col(pl.Float64, pl.Float32).fill_nan(None))
    rows = [{k: _json_value(v) for k, v in r.items()} for r in frame.iter_rows(named=True)]
    return {
        "table": table.name,
        "query": query,
        "columns": [
            {"name": c, "unit": table.unit(c), "description": table.description(c)}
            for c in frame.columns
        ],
        "rows": rows,
    }


def to_parquet(table: Table) -> bytes:
    """Parquet with each column's unit and description in its field metadata."""
    arrow = table.frame.to_arrow()
    fields = [
        f.with_metadata({"unit": table.unit(f.name), "description": table.description(f.name)})
        for f in arrow.schema
    ]
    arrow = arrow.cast(pa.schema(fields, metadata={"paretolens.table": table.name}))
    buf = io.BytesIO()
    pq.write_table(arrow, buf, compression="zstd")
    return buf.getvalue()


def _filename(table: str, view: object, fmt: str) -> str:
    runs = getattr(view, "runs", ()) or tuple(
        r for r in (getattr(view, "base", None), getattr(view, "candidate", None)) if r
    )
    stem = "_".join(["paretolens", table, *runs])[:120]
    return re.sub(r"[^A-Za-z0-9._-]", "_", stem) + f".{fmt}"


# ---- the export registry -------------------------------------------------------------------


@dataclass(frozen=True)
class Export:
    """One exportable table: the view model its query parses into and how to get the table."""

    view: type[RunView] | type[IndexView] | type[CompareView] | type[JobsView] | type[HistoryView]
    table: Callable[[DataSource, Any], Table]


def _run_table(name: str) -> Callable[[DataSource, Any], Table]:
    return lambda source, view: run_table(source.run_data(view), name)


def _compare_table(name: str) -> Callable[[DataSource, Any], Table]:
    def get(source: DataSource, view: CompareView) -> Table:
        if not (view.base and view.candidate):
            raise ExportError(400, "the query needs base=<run id>&candidate=<run id>")
        return compare_table(source.compare_data(view), name)

    return get


EXPORTS: dict[str, Export] = {
    **{name: Export(RunView, _run_table(name)) for name in TABLES},
    **{name: Export(CompareView, _compare_table(name)) for name in COMPARE_TABLES},
}
EXPORTS["runs"] = Export(IndexView, index_table)
EXPORTS["jobs"] = Export(JobsView, lambda source, view: jobs_table(source.store, view))
EXPORTS["history"] = Export(HistoryView, history_table)  # issue 14


def export_response(source: DataSource, filename: str, query: str) -> Response:
    """The response of `/export/<filename>?<query>`.

    Raises:
        ExportError: unknown table or format, or a query that names no run.
    """
    name, _, fmt = filename.rpartition(".")
    spec = EXPORTS.get(name)
    if spec is None:
        raise ExportError(404, f"unknown table {name!r}; tables: {', '.join(EXPORTS)}")
    formats = urls.EXTRA_FORMATS.get(name, urls.EXPORT_FORMATS)
    if fmt not in formats:
        raise ExportError(404, f"unknown format {fmt!r} for {name}; formats: {', '.join(formats)}")
    view, _notes = spec.view.parse(query)
    if isinstance(view, RunView) and not view.runs:
        raise ExportError(400, "no run in the query: add unofficialRun=<run id>")
    _known_runs(source, view)
    body: str | bytes
    if name == "baseline" and fmt == "md":  # issue 14: the PR markdown of the uplift
        assert isinstance(view, RunView)
        b = source.run_data(view).baseline
        if b is None:
            raise ExportError(400, "no baseline in the query: add baseline=<run id>|main")
        body = b.markdown
    elif name == "pruned" and fmt in ("yaml", "txt", "json"):
        assert isinstance(view, RunView)
        data = source.run_data(view)
        if fmt == "yaml":
            # Only a snippet that validates as a master config is handed out (issue 13).
            if data.pruned_check is not None:
                raise ExportError(422, data.pruned_check)
            body = data.pruned_yaml
        elif fmt == "txt":
            body = data.pruned_cli + "\n"
        else:
            body = json.dumps(pruned_json(data.pruned), indent=2, default=_json_value) + "\n"
    else:
        table = spec.table(source, view)
        if fmt == "csv":
            body = to_csv(table)
        elif fmt == "json":
            body = json.dumps(to_json(table, query), indent=2, default=_json_value) + "\n"
        else:
            body = to_parquet(table)
    resp = Response(body, content_type=CONTENT_TYPES[fmt])
    resp.headers["Content-Disposition"] = f'attachment; filename="{_filename(name, view, fmt)}"'
    return resp


def _known_runs(source: DataSource, view: object) -> None:
    """Refuse (404) an export of runs the store does not have: an empty table would read as
    "the run has no points".

    Raises:
        ExportError: 404 naming the runs not in the store.
    """
    if isinstance(view, RunView):
        runs: tuple[str, ...] = view.runs
    elif isinstance(view, CompareView):
        runs = tuple(r for r in (view.base, view.candidate) if r)
    else:
        return
    have = set(source.store.run_ids())
    missing = [r for r in runs if r not in have]
    if missing:
        raise ExportError(
            404,
            f"run{'s' if len(missing) > 1 else ''} {', '.join(missing)} not in the store: "
            "ingest it (paretolens ingest PATH --run-id ID) or fetch it (paretolens fetch ID)",
        )


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
) -> None:
    """Add the export and API routes and the one error handler to the Flask server."""
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
        or form fields `set=COLUMN=VALUE`."""
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
            return check_defaults({str(k): v for k, v in pairs.items()})
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
        log_unexpected(exc)
        return _error(500, "internal error; the server log names the exception")


def _json(doc: dict[str, Any], status: int = 200) -> Response:
    return Response(json.dumps(doc) + "\n", status=status, content_type="application/json")
