"""`paretolens table`: any table of the web app, in a script, as its export button gives it.

The command parses the same view model the export URL parses and renders through the same
registry (`views.exports.export_body`), so

    paretolens table deltas dsr1 --query 'ab=kv_offloading' --format csv

prints the bytes of `/export/deltas.csv?unofficialRun=dsr1&ab=kv_offloading`. `--query` takes the
page's query string or its whole address (a page link or an export link: what follows the `?`), so
"copy link" in the browser and a paste give the table in the terminal. Without a name it lists the
tables, the page query each takes and its formats.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlencode, urlsplit

import typer
from rich.table import Table as RichTable

from analysis.render import Rendering, keep_whole
from paretolens.commands.common import (
    OutputOpt,
    RunOpt,
    RunsArg,
    StoreOpt,
    UsageError,
    console,
    emit,
    guard,
    open_store,
    runs_of,
    write,
)
from paretolens.settings import GOLDEN_AL_DIR

# The dashboard's modules are imported when the command runs, so the other commands start
# without them.
if TYPE_CHECKING:
    from views.exports import Export

# The page each table's query comes from (what its view model parses).
_PAGES = {
    "RunView": "/inference (the run page)",
    "CompareView": "/compare",
    "IndexView": "/ (the runs index)",
    "JobsView": "/jobs",
    "HistoryView": "/history",
}


def _formats(spec: Export) -> list[str]:
    """The --format values of a table: its export formats (`analysis.render.FORMATS`: markdown
    for `.md`) and the formats that write any table but have no suffix (the terminal table)."""
    from analysis.render import FORMATS, by_suffix

    named = [f.name for f in (by_suffix(s) for s in spec.formats) if f is not None]
    return named + [f.name for f in FORMATS.values() if f.suffix is None and f.render]


def view_query(spec: Export, query: str, runs: list[str]) -> str:
    """The export query of `--query` (a query string or a whole page/export URL) with the run
    arguments added: the runs of a run-page table, or BASE CANDIDATE of a compare table.

    Raises:
        UsageError: runs a table's page does not take, or not two for a comparison.
    """
    from views.query.state import CompareView, RunView

    q = urlsplit(query).query if "?" in query else query.split("#")[0]
    q = q.lstrip("?")
    extra: list[tuple[str, str]] = []
    if runs and spec.view is RunView:
        extra = [("unofficialRun", ",".join(runs))]
    elif runs and spec.view is CompareView:
        if len(runs) != 2:
            raise UsageError("a comparison table takes two runs: BASE CANDIDATE")
        extra = [("base", runs[0]), ("candidate", runs[1])]
    elif runs:
        raise UsageError(
            f"this table takes no runs; give its {_PAGES[spec.view.__name__]} query with --query"
        )
    return "&".join(p for p in (q, urlencode(extra, safe=",:/")) if p)


def _list() -> None:
    from views.exports import EXPORTS

    t = RichTable("table", "query of", "formats", title="Tables (paretolens table NAME ...)")
    for name, spec in EXPORTS.items():
        t.add_row(name, _PAGES[spec.view.__name__], ", ".join(_formats(spec)))
    console.print(keep_whole(t))


def table(
    name: Annotated[
        str | None,
        typer.Argument(
            help="the table (points, deltas, pruned, uplift, runs, ...; without a name: the list)",
            show_default=False,
        ),
    ] = None,
    runs: RunsArg = None,
    run: RunOpt = None,
    query: Annotated[
        str,
        typer.Option(
            "--query",
            help="the page's query string or its whole URL, e.g. 'at=40&ab=kv_offloading' or "
            "'http://127.0.0.1:8050/inference?unofficialRun=dsr1&at=40'",
        ),
    ] = "",
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="any format of the table's web export (csv, json, parquet, markdown: the same "
            "bytes; the pruned list also yaml and txt), or table (the terminal)",
        ),
    ] = "table",
    output: OutputOpt = None,
    store: StoreOpt = None,
) -> None:
    """Print a table of the web app as its export gives it (same view, same bytes).

    Exit codes: 0, or 2 for an unknown table or format, a query that names no run, or a run not
    in the store.
    """
    if name is None:
        _list()
        return
    from analysis.render import FORMATS, by_suffix
    from views.exports import EXPORTS, ExportError, export_body, export_table
    from views.source import DataSource

    with guard(UsageError, ExportError):
        name, dot, suffix = name.rpartition(".") if "." in name else (name, "", "")
        spec = EXPORTS.get(name)
        if spec is None:
            raise UsageError(f"unknown table {name!r}; tables: {', '.join(EXPORTS)}")
        if dot:  # `points.csv`: the export's file name
            fmt = f.name if (f := by_suffix(suffix)) else suffix
        if fmt not in _formats(spec):
            raise UsageError(
                f"unknown format {fmt!r} for {name}; formats: {', '.join(_formats(spec))}"
            )
        q = view_query(spec, query, runs_of(runs, run))
        source = DataSource(open_store(store), GOLDEN_AL_DIR)
        chosen = FORMATS[fmt]
        if chosen.suffix is None:  # the terminal table
            emit(export_table(source, name, q), fmt, Rendering(digits=2))
            return
        if chosen.binary and output is None and sys.stdout.isatty():
            raise UsageError(f"{fmt} is binary: give --output FILE or redirect stdout")
        write(export_body(source, f"{name}.{chosen.suffix}", q).body, output)


def register(app: typer.Typer) -> None:
    """Register `table`."""
    app.command()(table)
