"""The registry of exportable tables: each table's view model, how to build it, and the formats it
answers, rendered by the one renderer registry (`analysis.render`).

`export_body(source, "<table>.<fmt>", query)` is what `/export/<table>.<fmt>?<query>` answers
(`dashboard.routes` makes it an HTTP response) and what `paretolens table` prints: one code path,
so the CLI and the web give the same bytes for the same view.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from analysis.comparison.baseline import MAIN
from analysis.render import OutputFormat, Rendering, by_suffix, file_formats, render
from analysis.sweep.pruned import pruned_json
from analysis.tables import Table, json_text
from views.query.state import CompareView, HistoryView, IndexView, JobsView, RunView
from views.source import DataSource
from views.tables import (
    COMPARE_TABLES,
    TABLES,
    compare_table,
    history_table,
    index_table,
    jobs_table,
    run_table,
)
from views.unknown_runs import not_found_text


class ExportError(Exception):
    """A request the export routes cannot answer: the message says what was wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


Body = Callable[[DataSource, Any], str | bytes]


@dataclass(frozen=True)
class Export:
    """One exportable table: the view model its query parses into, how to get the table, and the
    formats it answers in its own way (by URL suffix; the pruned list's YAML, the PR markdown)."""

    view: type[RunView] | type[IndexView] | type[CompareView] | type[JobsView] | type[HistoryView]
    table: Callable[[DataSource, Any], Table]
    own: Mapping[str, Body] = field(default_factory=dict)
    # The download links of the table: the formats of every table (`OutputFormat.link`), then
    # its own; or its own first, where those are what its users came for (the pruned list).
    own_first: bool = False

    @property
    def formats(self) -> tuple[str, ...]:
        """The URL suffixes this table answers: every table's (`analysis.render.FORMATS`) and
        its own."""
        every = tuple(f.suffix for f in file_formats() if f.suffix)
        return (*every, *(f for f in self.own if f not in every))

    @property
    def links(self) -> tuple[OutputFormat, ...]:
        """The formats the web app offers as download links under the table."""
        every = [f.suffix for f in file_formats() if f.link and f.suffix]
        own = list(self.own)
        order = [*own, *every] if self.own_first else [*every, *own]
        found = (by_suffix(s) for s in dict.fromkeys(order))
        return tuple(f for f in found if f is not None)


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
    **{
        name: Export(RunView, _run_table(name), _OWN.get(name, {}), own_first=name == "pruned")
        for name in TABLES
    },
    **{name: Export(CompareView, _compare_table(name)) for name in COMPARE_TABLES},
}
EXPORTS["runs"] = Export(IndexView, index_table)
EXPORTS["jobs"] = Export(JobsView, lambda source, view: jobs_table(source.store, view))


def _history_table(source: DataSource, view: HistoryView) -> Table:
    if not view.arm or view.at is None:
        raise ExportError(400, "the query needs arm=<arm id> and at=<x> (the history page's own)")
    return history_table(source, view)


EXPORTS["history"] = Export(HistoryView, _history_table)  # issue 14


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
        body = render(spec.table(source, view), _format(fmt).name, Rendering(query=view.query()))
    return Exported(body, _format(fmt).content_type or "", _filename(name, view, fmt))


def _format(suffix: str) -> OutputFormat:
    found = by_suffix(suffix)
    if found is None:  # Export.formats holds only declared suffixes
        raise ExportError(404, f"unknown format {suffix!r}")
    return found


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
