"""The registry of exportable tables: each table's view model, how to build it, and the formats it
answers, rendered by the one renderer registry (`analysis.render`).

`export_body(source, "<table>.<fmt>", query)` is what `/export/<table>.<fmt>?<query>` answers
(`dashboard.export` makes it an HTTP response) and what `paretolens table` prints: one code path,
so the CLI and the web give the same bytes for the same view.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from analysis import pruned_json
from analysis.baseline import MAIN
from analysis.render import Rendering, render
from analysis.tables import Table, json_text
from dashboard.data import DataSource
from dashboard.state import CompareView, HistoryView, IndexView, JobsView, RunView
from dashboard.tables import (
    COMPARE_TABLES,
    TABLES,
    compare_table,
    history_table,
    index_table,
    jobs_table,
    run_table,
)
from dashboard.unknown_runs import not_found_text

CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "parquet": "application/vnd.apache.parquet",
    "yaml": "application/yaml; charset=utf-8",
    "txt": "text/plain; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
}


class ExportError(Exception):
    """A request the export routes cannot answer: the message says what was wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# URL suffix -> the renderer's format (`analysis.render.RENDERERS`): every table answers these.
SUFFIXES: Mapping[str, str] = {"csv": "csv", "json": "json", "parquet": "parquet", "md": "markdown"}
# and the suffix of each renderer format, for the CLI (`--format markdown` is `.md`)
SUFFIX_OF: Mapping[str, str] = {fmt: suffix for suffix, fmt in SUFFIXES.items()}

Body = Callable[[DataSource, Any], str | bytes]


@dataclass(frozen=True)
class Export:
    """One exportable table: the view model its query parses into, how to get the table, and the
    formats it answers in its own way (by URL suffix; the pruned list's YAML, the PR markdown)."""

    view: type[RunView] | type[IndexView] | type[CompareView] | type[JobsView] | type[HistoryView]
    table: Callable[[DataSource, Any], Table]
    own: Mapping[str, Body] = field(default_factory=dict)

    @property
    def formats(self) -> tuple[str, ...]:
        """The URL suffixes this table answers: the renderers' and its own."""
        return (*SUFFIXES, *(f for f in self.own if f not in SUFFIXES))


def _run_table(name: str) -> Callable[[DataSource, Any], Table]:
    return lambda source, view: run_table(source.run_data(view), name)


def _compare_table(name: str) -> Callable[[DataSource, Any], Table]:
    def get(source: DataSource, view: CompareView) -> Table:
        if not (view.base and view.candidate):
            raise ExportError(400, "the query needs base=<run id>&candidate=<run id>")
        return compare_table(source.compare_data(view), name)

    return get


def _baseline_md(source: DataSource, view: RunView) -> str:
    """The PR markdown of the uplift over the baseline (issue 14)."""
    b = source.run_data(view).baseline
    if b is None:
        raise ExportError(400, "no baseline in the query: add baseline=<run id>|main")
    return b.markdown


def _pruned_yaml(source: DataSource, view: RunView) -> str:
    data = source.run_data(view)
    # Only a snippet that validates as a master config is handed out (issue 13).
    if data.pruned_check is not None:
        raise ExportError(422, data.pruned_check)
    return data.pruned_yaml


def _pruned_txt(source: DataSource, view: RunView) -> str:
    return source.run_data(view).pruned_cli + "\n"


def _pruned_json(source: DataSource, view: RunView) -> str:
    """`{arms, kept, dropped, slo}`, as `paretolens prune --format json` prints it."""
    return json_text(pruned_json(source.run_data(view).pruned))


_OWN: dict[str, Mapping[str, Body]] = {
    "pruned": {"yaml": _pruned_yaml, "txt": _pruned_txt, "json": _pruned_json},
    "baseline": {"md": _baseline_md},
}
EXPORTS: dict[str, Export] = {
    **{name: Export(RunView, _run_table(name), _OWN.get(name, {})) for name in TABLES},
    **{name: Export(CompareView, _compare_table(name)) for name in COMPARE_TABLES},
}
EXPORTS["runs"] = Export(IndexView, index_table)
EXPORTS["jobs"] = Export(JobsView, lambda source, view: jobs_table(source.store, view))
EXPORTS["history"] = Export(HistoryView, history_table)  # issue 14


@dataclass(frozen=True)
class Exported:
    """An export's body, content type and download name."""

    body: str | bytes
    content_type: str
    filename: str


def _spec(name: str) -> Export:
    spec = EXPORTS.get(name)
    if spec is None:
        raise ExportError(404, f"unknown table {name!r}; tables: {', '.join(EXPORTS)}")
    return spec


def _view(source: DataSource, spec: Export, query: str) -> Any:
    view, _notes = spec.view.parse(query)
    _known_runs(source, view, query)
    if isinstance(view, RunView) and not view.runs:
        raise ExportError(400, "no run in the query: add unofficialRun=<run id>")
    return view


def export_table(source: DataSource, name: str, query: str) -> Table:
    """The named table of the view a query describes (what every format of it renders).

    Raises:
        ExportError: as `export_body`.
    """
    spec = _spec(name)
    return spec.table(source, _view(source, spec, query))


def export_body(source: DataSource, filename: str, query: str) -> Exported:
    """What `/export/<filename>?<query>` answers, and `paretolens table` prints: the table of the
    view the query describes, rendered by the one registry (`analysis.render`). The JSON document
    names the view's query as the page writes it (defaults left out).

    Raises:
        ExportError: unknown table or format, or a query that names no run (or a run not in the
            store).
    """
    name, _, fmt = filename.rpartition(".")
    spec = _spec(name)
    if fmt not in spec.formats:
        raise ExportError(
            404, f"unknown format {fmt!r} for {name}; formats: {', '.join(spec.formats)}"
        )
    view = _view(source, spec, query)
    own = spec.own.get(fmt)
    if own is not None:
        body = own(source, view)
    else:
        body = render(spec.table(source, view), SUFFIXES[fmt], Rendering(query=view.query()))
    return Exported(body, CONTENT_TYPES[fmt], _filename(name, view, fmt))


def _filename(table: str, view: object, fmt: str) -> str:
    runs = getattr(view, "runs", ()) or tuple(
        r for r in (getattr(view, "base", None), getattr(view, "candidate", None)) if r
    )
    stem = "_".join(["paretolens", table, *runs])[:120]
    return re.sub(r"[^A-Za-z0-9._-]", "_", stem) + f".{fmt}"


def _known_runs(source: DataSource, view: object, query: str = "") -> None:
    """Refuse (404) an export of runs the store does not have: an empty table would read as
    "the run has no points".

    Raises:
        ExportError: 404 naming the runs not in the store.
    """
    if isinstance(view, RunView):
        # every id the query names: one that is no run id is refused as one not in the store
        runs: tuple[str, ...] = RunView.requested_runs(query) or view.runs
    elif isinstance(view, CompareView):
        # `main` is not a run: it resolves to the latest main-branch result per configuration.
        runs = tuple(r for r in (view.base, view.candidate) if r and r != MAIN)
    else:
        return
    text = not_found_text(runs, set(source.store.run_ids()))
    if text is not None:
        raise ExportError(404, text)
