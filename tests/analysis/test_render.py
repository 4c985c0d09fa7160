"""The one renderer registry: every format of one small table, as exact text."""

from __future__ import annotations

import io
import json
import math
from datetime import UTC, datetime

import polars as pl
import pyarrow.parquet as pq
import pytest

from analysis.render import FORMATS, Rendering, render, renderers
from analysis.tables import Table, derived_units

FRAME = pl.DataFrame(
    {
        "run_id": ["r1", "r2"],
        "p90_ttft": [1.5, math.nan],
        "x": [40.0, math.inf],
        "verdict": ["frontier", "=cmd"],
        "dominated_by": [["a", "b"], []],
        "ingested_at": [datetime(2026, 5, 1, 10, tzinfo=UTC), None],
    }
)
TABLE = Table("demo", "Demo", FRAME, units={"x": "tok/s/user"})


def test_derived_units_follow_the_plane_and_the_metric_a_column_is_named_after() -> None:
    # On a median_e2el (s) x joules_per_token (J/tok) plane: the plane's columns take its axes'
    # units, areas their product, *_pct is %, <metric>_<side> the metric's unit, the AL
    # expectations al_measured's; a side of no metric, and a column of no rule, get none.
    columns = [
        "x", "y", "x_lo", "x_hi", "matched_x", "area_between", "uplift_pct",
        "p90_ttft_baseline", "tput_per_gpu_candidate", "al_golden", "tolerance",
        "accuracy_baseline", "verdict", "run_id",
    ]  # fmt: skip
    assert derived_units(columns, "median_e2el", "joules_per_token") == {
        "x": "s", "y": "J/tok", "x_lo": "s", "x_hi": "s", "matched_x": "s",
        "area_between": "J/tok x s", "uplift_pct": "%", "p90_ttft_baseline": "s",
        "tput_per_gpu_candidate": "tok/s/GPU", "al_golden": "tokens/step",
        "tolerance": "tokens/step",
    }  # fmt: skip
    with pytest.raises(ValueError, match="not_a_column"):
        derived_units(["x"], "not_a_column", "y")


def test_the_registry_has_every_format() -> None:
    assert tuple(renderers()) == ("csv", "json", "parquet", "markdown", "table")
    # each format declared once: --format name, URL suffix, content type, offered as a link
    assert [(f.name, f.suffix, f.content_type, f.link, f.link_text) for f in FORMATS.values()] == [
        ("csv", "csv", "text/csv; charset=utf-8", True, "CSV"),
        ("json", "json", "application/json", True, "JSON"),
        ("parquet", "parquet", "application/vnd.apache.parquet", True, "PARQUET"),
        ("markdown", "md", "text/markdown; charset=utf-8", False, "MD"),
        ("table", None, None, False, "TABLE"),
        ("yaml", "yaml", "application/yaml; charset=utf-8", False, "YAML"),
        ("txt", "txt", "text/plain; charset=utf-8", False, "CLI line"),
    ]
    with pytest.raises(ValueError, match="unknown format 'xlsx'; formats: csv, json, parquet"):
        render(TABLE, "xlsx")


def test_csv_units_in_headers_nan_empty_lists_joined_formulas_neutralised() -> None:
    # p90_ttft's unit is the schema's (s), x's the table's own, verdict has none; NaN and inf are
    # empty cells, the list is joined with '; ' (an empty list is "", a missing time nothing),
    # '=cmd' is prefixed with "'".
    assert render(TABLE, "csv") == (
        "run_id,p90_ttft (s),x (tok/s/user),verdict,dominated_by,ingested_at\n"
        "r1,1.5,40.0,frontier,a; b,2026-05-01T10:00:00.000000+0000\n"
        'r2,,,\'=cmd,"",\n'
    )
    assert render(TABLE, "csv", Rendering(units=False)).startswith(
        "run_id,p90_ttft,x,verdict,dominated_by,ingested_at\n"
    )


def test_json_document_and_rows() -> None:
    doc = json.loads(render(TABLE, "json", Rendering(query="unofficialRun=r1")))
    assert doc["table"] == "demo" and doc["query"] == "unofficialRun=r1"
    assert doc["columns"][1] == {
        "name": "p90_ttft",
        "unit": "s",
        "description": "90th percentile time to first token",
    }
    assert doc["columns"][3]["description"].startswith("frontier | dominated")
    assert doc["rows"] == [
        {"run_id": "r1", "p90_ttft": 1.5, "x": 40.0, "verdict": "frontier",
         "dominated_by": ["a", "b"], "ingested_at": "2026-05-01T10:00:00+00:00"},
        {"run_id": "r2", "p90_ttft": None, "x": None, "verdict": "=cmd", "dominated_by": [],
         "ingested_at": None},
    ]  # fmt: skip
    rows = json.loads(render(TABLE, "json", Rendering(shape="rows")))
    assert rows == doc["rows"]


def test_markdown_and_the_terminal_table() -> None:
    how = Rendering(columns=["run_id", "x", "verdict", "nope"])
    assert render(TABLE, "markdown", how) == (
        "| run_id | x (tok/s/user) | verdict |\n"
        "|---|---|---|\n"
        "| r1 | 40.00 | frontier |\n"
        "| r2 |  | =cmd |\n"
    )
    text = render(TABLE, "table", Rendering(columns=["run_id", "x"], width=40))
    assert isinstance(text, str)
    assert text.splitlines()[0].strip() == "Demo"
    assert "│ r1     │ 40.00 │" in text and "│ r2     │       │" in text


def test_parquet_carries_units_and_descriptions() -> None:
    data = render(TABLE, "parquet")
    assert isinstance(data, bytes)
    table = pq.read_table(io.BytesIO(data))
    assert table.schema.metadata[b"paretolens.table"] == b"demo"
    assert table.schema.field("x").metadata[b"unit"] == b"tok/s/user"
    assert table.schema.field("p90_ttft").metadata[b"unit"] == b"s"
    assert table.column("run_id").to_pylist() == ["r1", "r2"]
