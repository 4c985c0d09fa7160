"""Reader for run-level `results_bmk/agg_bmk.json` arrays.

`utils/collect_results.py` loads every `*.json` of the downloaded `bmk_*` artifacts into one JSON
array, so it mixes flat fixed-sequence rows and nested AgentX rows and keeps retries (formats.md 6).
InferenceX-app's manual-sweep uploads wrap the same rows as `{"benchmarks": [...], "evaluations":
[...]}`; the `benchmarks` array is read the same way (evaluations are not points). Each element goes to the row reader of its shape. An element that cannot be read, or that would
fail the data contract, becomes a `RowReject` naming its index; the other elements are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError, SchemaError
from ingest.normalize.row import normalize
from ingest.readers._common import RepeatedElements
from ingest.readers.agentic import is_agentic_v3, read_agentic_v3
from ingest.readers.agentic_flat import is_agentic_flat, read_agentic_flat
from ingest.readers.agg_fixed import is_fixed_aggregate, read_fixed_row
from ingest.readers.base import ReadResult, Row, RowReject, SourceFile


@dataclass(frozen=True)
class _RowReader:
    name: str
    sniff: Callable[[Any], bool]
    read: Callable[[SourceFile, Any], Row]


_ROW_READERS = (
    _RowReader("agentic_v3", is_agentic_v3, read_agentic_v3),
    _RowReader("agentic_flat", is_agentic_flat, read_agentic_flat),
    _RowReader("agg_fixed", is_fixed_aggregate, read_fixed_row),
)


def _row_reader(element: Any) -> _RowReader | None:
    return next((r for r in _ROW_READERS if r.sniff(element)), None)


def _rows_of(doc: Any) -> list[Any] | None:
    """The aggregate rows of an `agg_bmk.json` array or a `{"benchmarks": [...]}` container."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list):
        return list(doc["benchmarks"])
    return None


def _unknown_row(element: Any) -> str:
    keys = sorted(element)[:30] if isinstance(element, dict) else []
    what = f"keys found: {', '.join(keys)}" if keys else f"a JSON {type(element).__name__}"
    return (
        "agg_array: not a fixed-sequence (process_result.py: hw, tp, tput_per_gpu) or agentic "
        f"(scenario_type agentic-coding, request_metrics or conc) aggregate row; {what}"
    )


def _checked(src: SourceFile, element: Any, reader: _RowReader) -> tuple[Row, str]:
    """The partial row and its identity (arm and conc), or ParseError/SchemaError."""
    row = reader.read(src, element)
    # Validate now so one bad element is rejected alone instead of failing the whole array.
    full = normalize(
        row,
        run_id="",
        source_path=src.rel,
        source_sha256="",
        artifact="",
        ingested_at=None,
    )
    return row, f"{full[Col.ARM_ID.value]}/{full[Col.CONC.value]}"


class AggArrayReader:
    """`agg_bmk.json`: an array of fixed-sequence and agentic aggregate rows."""

    name = "agg_array"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        rows = _rows_of(doc)
        return rows is not None and any(_row_reader(e) is not None for e in rows)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        rows = _rows_of(doc)
        if rows is None:
            raise ParseError(
                src.rel, "", 'expected a JSON array of aggregate rows or {"benchmarks": [...]}'
            )
        result = ReadResult()
        seen_bodies = RepeatedElements()
        seen_points: dict[str, int] = {}
        for i, element in enumerate(rows):
            reader = _row_reader(element)
            if reader is None:
                result.rejects.append(RowReject("", _unknown_row(element), str(i)))
                continue
            if seen_bodies.repeats(result, i, element):
                continue
            try:
                row, point = _checked(src, element, reader)
            except (ParseError, SchemaError) as exc:
                result.rejects.append(RowReject(exc.field, exc.reason, str(i)))
                continue
            # A second element of one configuration and conc with other numbers (a retried job)
            # is a repeat: the pipeline makes one point of them (ingest.normalize.measurements).
            if point in seen_points:
                result.notes.append(
                    f"element {i} measures the configuration and conc of element "
                    f"{seen_points[point]} again: one point with both as repeats"
                )
            seen_points.setdefault(point, i)
            result.points.append(row)
        return result


FILE_READERS = (AggArrayReader(),)
