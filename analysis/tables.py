"""Render analysis frames as JSON records, CSV and markdown (one renderer per format).

List columns (`dominated_by`, `confounds`) stay lists in JSON and are joined with '; ' in CSV and
markdown, so every table exports without losing a value.
"""

from __future__ import annotations

import json
import math
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


def flat(frame: pl.DataFrame) -> pl.DataFrame:
    """List and struct columns joined into strings (for CSV and text tables)."""
    exprs = []
    for name, dtype in frame.schema.items():
        if isinstance(dtype, pl.List):
            exprs.append(pl.col(name).list.eval(pl.element().cast(pl.String)).list.join(_LIST_SEP))
        elif isinstance(dtype, pl.Struct):
            exprs.append(pl.col(name).struct.json_encode())
    return frame.with_columns(exprs) if exprs else frame


def csv_text(frame: pl.DataFrame) -> str:
    """The frame as CSV text with a header row."""
    return flat(frame).write_csv()


def md_cell(value: Any, digits: int = 2) -> str:
    """One markdown table cell: floats rounded, pipes escaped, None empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value).replace("|", "\\|")


def markdown_table(
    frame: pl.DataFrame, columns: Sequence[str] | None = None, digits: int = 2
) -> str:
    """A GitHub markdown table of the chosen columns (all by default); pipes are escaped."""
    cols = list(columns) if columns is not None else frame.columns
    data = flat(frame.select(cols))
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in data.iter_rows():
        lines.append("| " + " | ".join(md_cell(v, digits) for v in row) + " |")
    return "\n".join(lines) + "\n"
