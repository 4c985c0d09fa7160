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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from flask import Flask, Response, request

from analysis import pruned_json
from dashboard import auth, launching, urls
from dashboard.data import DataSource
from dashboard.fetch import Fetcher
from dashboard.state import CompareView, IndexView, JobsView, RunView
from dashboard.tables import COMPARE_TABLES, TABLES, Table, jobs_table
from paretolens.settings import Settings
from runner import service
from runner.errors import JobNotFound, LaunchRefused, RunnerError

log = logging.getLogger("paretolens.dashboard")

CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "parquet": "application/vnd.apache.parquet",
    "yaml": "application/yaml; charset=utf-8",
    "txt": "text/plain; charset=utf-8",
}


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
    """CSV with a unit in every header ('p99_ttft (s)')."""
    frame = _flat(table.frame)
    return frame.rename({c: table.header(c) for c in frame.columns}).write_csv()


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

    view: type[RunView] | type[IndexView] | type[CompareView] | type[JobsView]
    table: Callable[[DataSource, Any], Table]


def _run_table(name: str) -> Callable[[DataSource, Any], Table]:
    return lambda source, view: source.run_data(view).table(name)


def _compare_table(name: str) -> Callable[[DataSource, Any], Table]:
    def get(source: DataSource, view: CompareView) -> Table:
        if not (view.base and view.candidate):
            raise ExportError(400, "the query needs base=<run id>&candidate=<run id>")
        return source.compare_data(view).table(name)

    return get


EXPORTS: dict[str, Export] = {
    **{name: Export(RunView, _run_table(name)) for name in TABLES},
    **{name: Export(CompareView, _compare_table(name)) for name in COMPARE_TABLES},
}
EXPORTS["runs"] = Export(IndexView, lambda source, view: source.index_table(view))
EXPORTS["jobs"] = Export(JobsView, lambda source, view: jobs_table(source.store, view))


def export_response(source: DataSource, filename: str, query: str) -> Response:
    """The response of `/export/<filename>?<query>`.

    Raises:
        ExportError: unknown table or format, or a query that names no run.
    """
    name, _, fmt = filename.rpartition(".")
    spec = EXPORTS.get(name)
    if spec is None:
        raise ExportError(404, f"unknown table {name!r}; tables: {', '.join(EXPORTS)}")
    formats = urls.PRUNED_FORMATS if name == "pruned" else urls.EXPORT_FORMATS
    if fmt not in formats:
        raise ExportError(404, f"unknown format {fmt!r} for {name}; formats: {', '.join(formats)}")
    view, _notes = spec.view.parse(query)
    if isinstance(view, RunView) and not view.runs:
        raise ExportError(400, "no run in the query: add unofficialRun=<run id>")
    body: str | bytes
    if name == "pruned" and fmt in ("yaml", "txt", "json"):
        assert isinstance(view, RunView)
        data = source.run_data(view)
        if fmt == "yaml":
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


# ---- routes --------------------------------------------------------------------------------


def _error(status: int, message: str) -> Response:
    wants_json = request.path.endswith(".json") or request.path.startswith(urls.API_PREFIX)
    if wants_json:
        body = json.dumps({"error": message, "status": status}) + "\n"
        return Response(body, status=status, content_type="application/json")
    return Response(message + "\n", status=status, content_type="text/plain; charset=utf-8")


def register_routes(
    server: Flask, source: DataSource, settings: Settings, fetcher: Fetcher
) -> None:
    """Add the export and API routes and the one error handler to the Flask server."""

    @server.get(f"{urls.EXPORT_PREFIX}<path:filename>")
    def export(filename: str) -> Response:
        return export_response(source, filename, request.query_string.decode("utf-8", "replace"))

    @server.post(f"{urls.API_PREFIX}fetch/<run_id>")
    def fetch(run_id: str) -> Response:
        auth.authorize_fetch(settings, auth.request_token(request))
        return _json(fetcher.start(run_id).snapshot(), 202)

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
        view, _ = RunView.parse(str(form.get("query", "")))
        if not view.runs:
            raise ExportError(400, "no run: send query=<the run page's query string>")
        job = launching.launch_from_view(
            source,
            settings,
            view,
            what="points" if form.get("source") == "points" else "pruned",
            point_ids=[p for p in str(form.get("points", "")).split(",") if p],
            backend=str(form.get("backend", "local")),
            options=str(form.get("options", "")),
            token=auth.request_token(request),
        )
        return _json({"job": job, "url": urls.jobs(JobsView(job=job))}, 202)

    @server.post(f"{urls.API_PREFIX}jobs/<job_id>/cancel")
    def cancel(job_id: str) -> Response:
        st = service.cancel_job(source.store, job_id, settings, token=auth.request_token(request))
        return _json({"job": st.id, "state": st.state.value})

    @server.errorhandler(ExportError)
    def on_export_error(exc: ExportError) -> Response:
        return _error(exc.status, str(exc))

    @server.errorhandler(auth.AuthError)
    @server.errorhandler(LaunchRefused)
    def on_refused(exc: Exception) -> Response:
        return _error(403, str(exc))

    @server.errorhandler(JobNotFound)
    def on_missing_job(exc: JobNotFound) -> Response:
        return _error(404, str(exc))

    @server.errorhandler(RunnerError)
    @server.errorhandler(ValueError)
    def on_bad_request(exc: Exception) -> Response:
        return _error(400, str(exc))

    @server.errorhandler(Exception)
    def on_unexpected(exc: Exception) -> Response:
        if getattr(exc, "code", None) and hasattr(exc, "get_response"):
            return exc.get_response()  # type: ignore[no-any-return]  # werkzeug HTTP errors
        log.exception("unexpected error on %s %s", request.method, request.path)
        return _error(500, "internal error; the server log names the exception")


def _json(doc: dict[str, Any], status: int = 200) -> Response:
    return Response(json.dumps(doc) + "\n", status=status, content_type="application/json")
