"""Render analysis frames as JSON records, CSV and markdown (one renderer per format).

List columns (`dominated_by`, `confounds`) stay lists in JSON and are joined with '; ' in CSV and
markdown, so every table exports without losing a value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

import polars as pl

_LIST_SEP = "; "


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts (NaN and infinities become null)."""
    return [{k: _clean(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]


def json_text(doc: Any) -> str:
    """A frame (as records) or any JSON-ready object, as indented JSON text."""
    if isinstance(doc, pl.DataFrame):
        doc = records(doc)
    return json.dumps(doc, indent=2, default=str) + "\n"


def flat(frame: pl.DataFrame, list_sep: str = _LIST_SEP) -> pl.DataFrame:
    """List and struct columns joined into strings (for CSV and text tables)."""
    exprs = []
    for name, dtype in frame.schema.items():
        if isinstance(dtype, pl.List):
            exprs.append(pl.col(name).list.eval(pl.element().cast(pl.String)).list.join(list_sep))
        elif isinstance(dtype, pl.Struct):
            exprs.append(pl.col(name).struct.json_encode())
    return frame.with_columns(exprs) if exprs else frame


# A cell a spreadsheet would run as a formula starts with one of these (OWASP, "CSV Injection").
_FORMULA_START = r"^[=+\-@\t\r]"
# ... unless the whole cell is a number or a list of numbers ('-3.5', '1e-3', '-1;2'): those stay.
_NUMBERS = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?(\s*;\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)*$"


def neutralise_formulas(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells a spreadsheet would evaluate (starting with `=`, `+`, `-`, `@`, tab or CR)
    prefixed with `'`, as OWASP advises; numbers, and text that is a number, stay as they are."""
    exprs = [
        pl.when(pl.col(name).str.contains(_FORMULA_START) & ~pl.col(name).str.contains(_NUMBERS))
        .then(pl.lit("'") + pl.col(name))
        .otherwise(pl.col(name))
        .alias(name)
        for name, dtype in frame.schema.items()
        if dtype == pl.String
    ]
    return frame.with_columns(exprs) if exprs else frame


def csv_text(frame: pl.DataFrame, list_sep: str = _LIST_SEP) -> str:
    """The frame as CSV text with a header row: the one CSV renderer (CLI and web exports).

    Lists are joined with `list_sep`; text cells that a spreadsheet would run as a formula are
    neutralised (`neutralise_formulas`).
    """
    return neutralise_formulas(flat(frame, list_sep)).write_csv()


# Markdown metacharacters (CommonMark lets any ASCII punctuation be escaped with a backslash):
# links and images ([ ] ( ) !), raw HTML and autolinks (< > &), emphasis and code (* _ ~ `),
# table cells (|), and what GitHub turns into links on its own (the : of a URL, the @ of an
# e-mail address, the . after www). A cell never starts a line, so - + # = need no escape.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]()!<>|~&:@]|(?<=[wW]{3})\.)")
_MD_SPECIAL_OUTSIDE_TABLES = re.compile(r"([\\`*_\[\]()!<>~&:@]|(?<=[wW]{3})\.)")


def md_text(value: object, *, in_table: bool = True) -> str:
    """Text from a result file, inert in markdown: its metacharacters backslash-escaped and line
    breaks made spaces, so it renders as the same characters and never as a link, image, HTML
    or formatting (`|` is escaped only in a table cell, where it would end the cell)."""
    text = " ".join(str(value).splitlines())
    pattern = _MD_SPECIAL if in_table else _MD_SPECIAL_OUTSIDE_TABLES
    return pattern.sub(r"\\\1", text)


def md_cell(value: Any, digits: int = 2) -> str:
    """One markdown table cell: floats rounded, None empty, text escaped (`md_text`)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return str(value)
    return md_text(value)


def markdown_table(
    frame: pl.DataFrame, columns: Sequence[str] | None = None, digits: int = 2
) -> str:
    """A GitHub markdown table of the chosen columns (all by default); cell text is escaped."""
    cols = list(columns) if columns is not None else frame.columns
    data = flat(frame.select(cols))
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in data.iter_rows():
        lines.append("| " + " | ".join(md_cell(v, digits) for v in row) + " |")
    return "\n".join(lines) + "\n"
