"""One renderer registry for every table, used by the CLI and the web exports alike.

As datasette's `_register_renderers`: `FORMATS` declares each format once (its `--format` name,
URL suffix, content type, renderer and where it is offered), and `render(table, fmt)` looks the
renderer up. `/export/<table>.<fmt>?<query>` answers
`render(table, fmt, Rendering(query=...))`, and `paretolens table NAME --format F` prints the same
bytes; the other commands pass their own `Rendering` (no units in CSV headers, JSON as a bare array
of rows, chosen columns in markdown and the terminal table). Adding a format is adding one entry
to FORMATS and its renderer.

| format | what |
|---|---|
| csv | header row `col (unit)`, lists joined with '; ', NaN empty, formulas neutralised |
| json | `{table, query, columns: [{name, unit, description}], rows}` (or only the rows) |
| parquet | zstd Parquet, each field's unit and description in its metadata |
| markdown | a GitHub table (`col (unit)` headers), cell text escaped |
| table | a terminal table (rich): identifier columns never cut |
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from analysis.tables import Table, csv_text, finite, flat, markdown_table, records
from ingest.untrusted.controls import escape_controls

if TYPE_CHECKING:
    from rich.table import Table as RichTable


@dataclass(frozen=True)
class Rendering:
    """How a table is written (the defaults are the web export's).

    Attributes:
        query: the view's query string, named in the JSON document.
        units: headers as `col (unit)` in CSV and markdown.
        shape: JSON as the whole `document` or only the `rows` (an array of objects).
        columns: the columns markdown and the terminal table show (all, in order, when None;
            names the table lacks are skipped). CSV, JSON and Parquet always carry every column.
        digits: decimals of floats in markdown and the terminal table (None: as stored).
        width: the terminal table's width (None: the terminal's, when it is drawn).
        color: the terminal table with ANSI styles (a terminal) or plain (a pipe or a file).
    """

    query: str = ""
    units: bool = True
    shape: Literal["document", "rows"] = "document"
    columns: Sequence[str] | None = None
    digits: int | None = 2
    width: int | None = None
    color: bool = False


Renderer = Callable[[Table, Rendering], str | bytes]


def _shown(table: Table, how: Rendering) -> list[str]:
    if how.columns is None:
        return list(table.frame.columns)
    return [c for c in how.columns if c in table.frame.columns]


def _csv(table: Table, how: Rendering) -> str:
    frame = table.frame
    if how.units:
        frame = frame.rename({c: table.header(c) for c in frame.columns})
    return csv_text(frame)


def _json(table: Table, how: Rendering) -> str:
    rows = records(table.frame)
    if how.shape == "rows":
        return json.dumps(rows, indent=2, default=str) + "\n"
    doc = {
        "table": table.name,
        "query": how.query,
        "columns": [
            {"name": c, "unit": table.unit(c), "description": table.description(c)}
            for c in table.frame.columns
        ],
        "rows": rows,
    }
    return json.dumps(doc, indent=2, default=str) + "\n"


def _parquet(table: Table, how: Rendering) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = table.frame.to_arrow()
    fields = [
        f.with_metadata({"unit": table.unit(f.name), "description": table.description(f.name)})
        for f in arrow.schema
    ]
    arrow = arrow.cast(pa.schema(fields, metadata={"paretolens.table": table.name}))
    buf = io.BytesIO()
    pq.write_table(arrow, buf, compression="zstd")
    return buf.getvalue()


def _markdown(table: Table, how: Rendering) -> str:
    cols = _shown(table, how)
    heads = [table.header(c) for c in cols] if how.units else cols
    return markdown_table(table.frame, cols, 2 if how.digits is None else how.digits, heads)


# Columns a user copies into the next command (`--run`, `paretolens job`, `--point`).
WHOLE: frozenset[str] = frozenset({"run_id", "point_id", "arm_id", "conc", "job", "point", "run"})


def keep_whole(table: RichTable) -> RichTable:
    """Give every WHOLE column of a terminal table the width of its longest cell, unwrapped; the
    other columns share what is left."""
    for col in table.columns:
        if str(col.header) in WHOLE:
            col.no_wrap = True
            col.min_width = max([len(str(col.header)), *(len(str(c)) for c in col.cells)])
    return table


def _cell(value: object, digits: int | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and digits is not None:
        return f"{value:.{digits}f}"
    return str(value)


def _terminal(table: Table, how: Rendering) -> str:
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    cols = _shown(table, how)
    out = RichTable(*cols, title=table.title or None, show_lines=False)
    for row in flat(finite(table.frame.select(cols))).iter_rows():
        # Text cells: a label from a result file is shown as written, never read as markup, and
        # its control characters escaped (an ESC in a model string does nothing to the terminal).
        out.add_row(*(Text(escape_controls(_cell(v, how.digits), keep_layout=True)) for v in row))
    buf = io.StringIO()
    console = Console(file=buf, width=how.width, force_terminal=how.color, no_color=not how.color)
    console.print(keep_whole(out))
    return buf.getvalue()


@dataclass(frozen=True)
class OutputFormat:
    """One output format, declared once: the CLI's `--format` value, the web export's URL suffix
    and content type, the renderer, and where it is offered (datasette's `renderers[ext] =
    (render, can_render)`).

    Attributes:
        name: the `--format` value (`markdown`).
        suffix: the URL suffix of `/export/<table>.<suffix>` (`md`); None for the terminal table.
        content_type: the web response's content type (None for the terminal table).
        render: writes any table; None for a format only some tables write in their own way
            (the pruned list's YAML and CLI line: `views.exports.Export.own`).
        link: offered as a download link under every table of the web app.
        label: the link's text (the suffix in capitals by default).
        binary: bytes rather than text (written to a file or a pipe, never to a terminal).
    """

    name: str
    suffix: str | None
    content_type: str | None
    render: Renderer | None
    link: bool = False
    label: str = ""
    binary: bool = False

    @property
    def link_text(self) -> str:
        """What the export link says."""
        return self.label or (self.suffix or self.name).upper()


# Every output format, each declared once; the renderers, the web exports (suffix, content type,
# links), the CLI's `--format` choices and `paretolens table` all read this mapping.
FORMATS: dict[str, OutputFormat] = {
    f.name: f
    for f in (
        OutputFormat("csv", "csv", "text/csv; charset=utf-8", _csv, link=True),
        OutputFormat("json", "json", "application/json", _json, link=True),
        OutputFormat(
            "parquet", "parquet", "application/vnd.apache.parquet", _parquet, link=True, binary=True
        ),
        OutputFormat("markdown", "md", "text/markdown; charset=utf-8", _markdown),
        OutputFormat("table", None, None, _terminal),
        OutputFormat("yaml", "yaml", "application/yaml; charset=utf-8", None),
        OutputFormat("txt", "txt", "text/plain; charset=utf-8", None, label="CLI line"),
    )
}


def renderers() -> dict[str, Renderer]:
    """Format name -> the function that writes any table in it."""
    return {f.name: f.render for f in FORMATS.values() if f.render is not None}


def file_formats() -> tuple[OutputFormat, ...]:
    """The formats any table is exported in as a file (a suffix and a renderer)."""
    return tuple(f for f in FORMATS.values() if f.suffix and f.render is not None)


def by_suffix(suffix: str) -> OutputFormat | None:
    """The format of a URL suffix (`md` -> markdown), or None."""
    return next((f for f in FORMATS.values() if f.suffix == suffix), None)


def by_name_or_suffix(fmt: str) -> OutputFormat | None:
    """The format a user named by its `--format` value or its suffix, or None."""
    return FORMATS.get(fmt) or by_suffix(fmt)


def render(table: Table, fmt: str, how: Rendering = Rendering()) -> str | bytes:
    """`table` written as `fmt` (a format of FORMATS with a renderer): text, or bytes for Parquet.

    Raises:
        ValueError: an unknown format, naming the known ones.
    """
    known = renderers()
    renderer = known.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown format {fmt!r}; formats: {', '.join(known)}")
    return renderer(table, how)


__all__ = [
    "FORMATS",
    "WHOLE",
    "OutputFormat",
    "Renderer",
    "Rendering",
    "by_name_or_suffix",
    "by_suffix",
    "file_formats",
    "keep_whole",
    "render",
    "renderers",
]
