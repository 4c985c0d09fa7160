"""The table contract: a named frame whose every column has a unit and a meaning.

Canonical columns take their unit and description from `ingest.contract.schema` (SPECS); the output columns
of the analyses (`verdict`, `reason`, ...) are declared once here (`COLUMNS`), and so are the
units of their derived columns (the plane's `x`/`y`, `*_delta_pct`, `<metric>_baseline`, ...:
`derived_units(columns, x, y)`); a table's own `units`/`descriptions` carry those and the rest.
The renderers that write a `Table` as CSV, JSON, Parquet, markdown or a terminal table are one
registry, `analysis.render.RENDERERS`, used by the CLI and the web exports alike.

The cell helpers below are what those renderers share: list columns (`dominated_by`, `confounds`)
stay lists in JSON and are joined with '; ' in CSV and markdown, NaN and infinities are empty (null
in JSON), so every table exports without losing a value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import polars as pl

from ingest.contract.col import Col, ColumnSpec
from ingest.contract.schema import SPECS, spec_of, unit
from ingest.untrusted.controls import CONTROLS_PATTERN, escape_controls

LIST_SEP = "; "


@dataclass(frozen=True)
class Column:
    """An analysis output column's unit ('' for none) and meaning."""

    unit: str
    description: str


# The output columns of the analyses, declared once (every table that carries one names it so).
COLUMNS: Mapping[str, Column] = {
    "verdict": Column("", "frontier | dominated | post_cliff | invalid, on the page's x/y plane"),
    "reason": Column("", "why the point got its verdict"),
    "on_arm_frontier": Column("", "on its own arm's frontier"),
    "knee_conc": Column("", "concurrency at which the arm's throughput stops rising"),
    "keep_reason": Column("", "why the point is kept for the full sweep"),
    "kept": Column("", "kept for the full sweep"),
    # the accuracy of both sides of an A/B pair or a comparison (`evals.accuracy_columns`)
    "accuracy_task": Column("", "the first task both sides were evaluated on"),
    "accuracy_baseline": Column("fraction", "the baseline side's (base run's) headline accuracy"),
    "accuracy_treatment": Column(
        "fraction", "the treatment side's (candidate run's) headline accuracy"
    ),
    "accuracy_flag": Column(
        "",
        "tasks whose accuracy differs by more than the combined standard error "
        "sqrt(se_b^2 + se_t^2)",
    ),
    # each arm's accuracy joined to its points (the points table, `views.accuracy`)
    "accuracy": Column(
        "",
        "every eval task of the arm: task, metric, score ± standard error, n_eff, the "
        "concurrency evaluated",
    ),
    "eval_task": Column(
        "", "the arm's first eval task (alphabetically; `accuracy` lists them all)"
    ),
    "eval_metric": Column("", "the task's headline metric (em_strict, acc, ...)"),
    "eval_score": Column(
        "fraction", "the arm's accuracy on the task, at its highest evaluated concurrency"
    ),
    "eval_stderr": Column("fraction", "standard error of eval_score"),
    "eval_n_eff": Column("samples", "effective number of samples behind eval_score"),
    "eval_conc": Column("requests", "the concurrency the eval ran at"),
    "eval_concs": Column("", "every concurrency the arm was evaluated at"),
    "n_evals": Column("", "eval rows behind the accuracy"),
}


def _declared(col: str) -> ColumnSpec | Column | None:
    """Where a column any table may carry is declared: the schema, else the analysis columns."""
    spec = _spec(col)
    return spec if spec is not None else COLUMNS.get(col)


def headed(col: str, unit: str) -> str:
    """'p99_ttft (s)': a column's name with its unit, as every table header shows it."""
    return f"{col} ({unit})" if unit else col


def column_unit(col: str) -> str:
    """Unit of a column any table may carry: the schema's, else the analysis column's."""
    known = _declared(col)
    return known.unit if known is not None else ""


def column_description(col: str) -> str:
    """What a column any table may carry means: the schema's words, else the analysis column's."""
    known = _declared(col)
    return known.description if known is not None else ""


# The analyses' columns whose unit follows from the plane or from the metric they are named after,
# declared once (`derived_units`): where `x`, `y` and the matched-x range are measured (the
# ranking at an x, the pruned list's plane, the frontier gaps), how the AL checks state an
# expectation, and the sides a delta or a comparison names (`<metric>_baseline`, ...).
X_COLUMNS = ("x", "x_lo", "x_hi", "matched_x")
Y_COLUMNS = ("y",)
AL_COLUMNS = ("al_expected", "al_pinned", "al_golden", "tolerance")
SIDES = ("_baseline", "_treatment", "_base", "_candidate")


def derived_units(columns: Iterable[str], x: str, y: str) -> dict[str, str]:
    """Units of the analyses' derived output columns on the plane `x`/`y` (canonical columns):
    `*_pct` is %, `X_COLUMNS` the x axis's unit and `Y_COLUMNS` the y axis's, `area_*` y-unit x
    x-unit, `AL_COLUMNS` tokens/step (as al_measured), `<metric>` + a `SIDES` suffix the metric's
    unit. Columns that are none of these are left out (the schema or `COLUMNS` name them).

    Raises:
        ValueError: `x` or `y` is not a canonical column.
    """
    ux, uy = unit(x), unit(y)
    axes = {**dict.fromkeys(X_COLUMNS, ux), **dict.fromkeys(Y_COLUMNS, uy)}
    out: dict[str, str] = {}
    for c in columns:
        stem = next((c.removesuffix(s) for s in SIDES if c.endswith(s)), None)
        if c.endswith("_pct"):
            out[c] = "%"
        elif c in axes:
            out[c] = axes[c]
        elif c.startswith("area_"):
            out[c] = f"{uy} x {ux}"
        elif c in AL_COLUMNS:
            out[c] = SPECS[Col.AL_MEASURED].unit
        elif stem is not None and spec_of(stem) is not None:
            out[c] = unit(stem)
    return out


def _spec(col: str) -> ColumnSpec | None:
    return spec_of(col)


@dataclass(frozen=True)
class Table:
    """A named table as the grids, the exports and the CLI see it (columns in order).

    `units` and `descriptions` name what neither the schema nor `COLUMNS` does; a unit given
    here wins over the schema's (a column the table redefines).
    """

    name: str
    title: str
    frame: pl.DataFrame
    units: Mapping[str, str] = field(default_factory=dict)
    descriptions: Mapping[str, str] = field(default_factory=dict)

    def unit(self, col: str) -> str:
        """Unit of a column: the table's own, else the schema's, else the analysis column's."""
        return self.units[col] if col in self.units else column_unit(col)

    def header(self, col: str) -> str:
        """'p99_ttft (s)': the column with its unit."""
        return headed(col, self.unit(col))

    def description(self, col: str) -> str:
        """What a column means: the schema's description, the table's own, the analysis one's."""
        if _spec(col) is None and col in self.descriptions:
            return self.descriptions[col]
        return column_description(col)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts (NaN and infinities become null, dates ISO 8601 text)."""
    return [{k: _clean(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]


def json_text(doc: Any) -> str:
    """A frame (as records) or any JSON-ready object, as indented JSON text."""
    if isinstance(doc, pl.DataFrame):
        doc = records(doc)
    return json.dumps(doc, indent=2, default=str) + "\n"


def finite(frame: pl.DataFrame) -> pl.DataFrame:
    """NaN and infinities made null (an empty CSV or markdown cell)."""
    floats = [n for n, t in frame.schema.items() if t in (pl.Float64, pl.Float32)]
    if not floats:
        return frame
    return frame.with_columns(
        pl.when(pl.col(n).is_finite()).then(pl.col(n)).otherwise(None).alias(n) for n in floats
    )


def flat(frame: pl.DataFrame, list_sep: str = LIST_SEP) -> pl.DataFrame:
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


def csv_text(frame: pl.DataFrame, list_sep: str = LIST_SEP) -> str:
    """The frame as CSV text with a header row: the one CSV writer (behind `render(..., "csv")`).

    Lists are joined with `list_sep`, NaN and infinities are empty; text cells that a spreadsheet
    would run as a formula are neutralised (`neutralise_formulas`).
    """
    return neutralise_formulas(escape_control_cells(flat(finite(frame), list_sep))).write_csv()


def escape_control_cells(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells with their control characters written as escapes (`ingest.untrusted.controls`): an ESC,
    BEL or NUL in a file name or model string never reaches a terminal that shows the file, and a
    newline never starts a line of its own. Only columns holding one are touched."""
    hit = [
        name
        for name, dtype in frame.schema.items()
        if dtype == pl.String and bool(frame[name].str.contains(CONTROLS_PATTERN).any())
    ]
    return frame.with_columns(
        pl.col(name).map_elements(escape_controls, return_dtype=pl.String) for name in hit
    )


# Markdown metacharacters (CommonMark lets any ASCII punctuation be escaped with a backslash):
# links and images ([ ] ( ) !), raw HTML and autolinks (< > &), emphasis and code (* _ ~ `),
# table cells (|), and what GitHub turns into links on its own (the : of a URL, the @ of an
# e-mail address, the . after www). A cell never starts a line, so - + # = need no escape.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]()!<>|~&:@]|(?<=[wW]{3})\.)")
_MD_SPECIAL_OUTSIDE_TABLES = re.compile(r"([\\`*_\[\]()!<>~&:@]|(?<=[wW]{3})\.)")


def md_text(value: object, *, in_table: bool = True) -> str:
    """Text from a result file, inert in markdown: its metacharacters backslash-escaped, line
    breaks made spaces and other control characters escapes (`\\x1b`), so it renders as the same characters and never as a link, image, HTML
    or formatting (`|` is escaped only in a table cell, where it would end the cell)."""
    text = escape_controls(" ".join(str(value).splitlines()))
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
    frame: pl.DataFrame,
    columns: Sequence[str] | None = None,
    digits: int = 2,
    headers: Sequence[str] | None = None,
) -> str:
    """A GitHub markdown table of the chosen columns (all by default; headed by `headers` when
    given, else the column names); cell text is escaped, NaN and infinities are empty."""
    cols = list(columns) if columns is not None else frame.columns
    data = flat(finite(frame.select(cols)))
    heads = list(headers) if headers is not None else cols
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(cols)]
    for row in data.iter_rows():
        lines.append("| " + " | ".join(md_cell(v, digits) for v in row) + " |")
    return "\n".join(lines) + "\n"
