"""aiperf server-metric dumps: `server_metrics_export.json` and `.csv` (formats.md §3.5).

The JSON holds profiling-window statistics per metric and series: counter `stats.total` is the
delta over the window, gauges carry `max`, and 1-second `timeslices` give the time series. Series
are summed across engines and servers; the same server listed under two URLs (aiperf's discovered
`localhost` and an explicit `127.0.0.1`) is counted once. Acceptance length follows §3.9 source 1;
the server summary follows InferenceX's vLLM adapter (§3.7). The CSV has the same statistics in
blank-line-separated sections (gauge, counter, histogram, info) with labels expanded into columns.
Neither file is a point: both enrich the point of their unit or of the paired aggregate; their
scope (the `model_name` label, the JSON's window, token counters) says which point that is when
there are several (`ingest.attach`).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from typing import Any

from ingest.errors import ParseError
from ingest.readers._metrics_common import (
    SERIES_PREFIXES,
    MetricStore,
    duplicate_note,
    endpoint_key,
    metric_scope,
    number,
    parse_float,
    server_summary,
    store_spec_row,
)
from ingest.readers.base import ReadResult, Row, SourceFile

AL_SOURCE = "aiperf_server_metrics"
_CSV_FIXED = {"Endpoint", "Type", "Metric", "Unit", "Description", "buckets"}
_STAT_COLUMN = re.compile(
    r"^(avg|min|max|std|total|rate|rate_\w+|count|count_rate|sum|sum_rate|p\d+(_estimate)?)$"
)


def _labels(raw: Any, rel: str, where: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ParseError(rel, f"{where}.labels", f"expected an object, got {type(raw).__name__}")
    return {str(k): str(v) for k, v in raw.items()}


def _metrics(doc: Mapping[str, Any], rel: str) -> Mapping[str, Any]:
    metrics = doc.get("metrics")
    if not isinstance(metrics, Mapping):
        raise ParseError(rel, "metrics", "expected an object of metric name -> {type, series}")
    return metrics


def _series(metric: Any, rel: str, name: str) -> list[Mapping[str, Any]]:
    if not isinstance(metric, Mapping):
        raise ParseError(rel, f"metrics.{name}", "expected an object with `type` and `series`")
    series = metric.get("series", [])
    if not isinstance(series, list) or not all(isinstance(s, Mapping) for s in series):
        raise ParseError(rel, f"metrics.{name}.series", "expected a list of series objects")
    return series


def _stat(series: Mapping[str, Any], key: str, rel: str, where: str) -> float | None:
    stats = series.get("stats")
    if not isinstance(stats, Mapping):
        raise ParseError(rel, f"{where}.stats", "expected an object of statistics")
    value = stats.get(key)
    return None if value is None else number(value, rel, f"{where}.stats.{key}")


def _mappings(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _t0(doc: Mapping[str, Any], metrics: Mapping[str, Any], rel: str) -> float | None:
    # aiperf's own plots start the clock at the earliest endpoint first_update_ns (§10).
    summary = doc.get("summary")
    info = summary.get("endpoint_info") if isinstance(summary, Mapping) else None
    starts = [
        number(v["first_update_ns"], rel, "summary.endpoint_info.first_update_ns")
        for v in (info.values() if isinstance(info, Mapping) else [])
        if isinstance(v, Mapping) and v.get("first_update_ns") is not None
    ]
    if starts:
        return min(starts)
    found = [
        number(ts["start_ns"], rel, "timeslices.start_ns")
        for m in metrics.values()
        if isinstance(m, Mapping)
        for s in _mappings(m.get("series"))
        for ts in _mappings(s.get("timeslices"))
        if ts.get("start_ns") is not None
    ]
    return min(found) if found else None


def _slice_rows(
    series: Mapping[str, Any],
    name: str,
    url: str,
    labels: dict[str, str],
    stats: tuple[str, ...],
    t0: float,
    rel: str,
) -> list[Row]:
    slices = series.get("timeslices", [])
    if not isinstance(slices, list):
        raise ParseError(rel, f"metrics.{name}.timeslices", "expected a list of timeslices")
    rows: list[Row] = []
    for i, ts in enumerate(slices):
        where = f"metrics.{name}.timeslices[{i}]"
        if not isinstance(ts, Mapping):
            raise ParseError(rel, where, "expected an object")
        if ts.get("is_complete") is False or ts.get("start_ns") is None:
            continue  # a trailing partial window would distort per-second rates
        t = (number(ts["start_ns"], rel, f"{where}.start_ns") - t0) / 1e9
        for stat in stats:
            if ts.get(stat) is not None:
                tagged = {**labels, "server": endpoint_key(url), "stat": stat}
                rows.append(
                    {
                        "metric": name,
                        "labels": json.dumps(tagged, sort_keys=True),
                        "t": t,
                        "value": number(ts[stat], rel, f"{where}.{stat}"),
                        "point_key": None,
                    }
                )
    return rows


def read_json_dump(doc: Mapping[str, Any], rel: str) -> tuple[MetricStore, list[Row]]:
    """Counter totals, gauge peaks and time series of a `server_metrics_export.json`.

    Raises:
        ParseError: naming the metric and field that do not have the documented shape.
    """
    metrics = _metrics(doc, rel)
    store, rows = MetricStore(), []
    t0 = _t0(doc, metrics, rel)
    stats: tuple[str, ...]
    for name, metric in metrics.items():
        kind = metric.get("type") if isinstance(metric, Mapping) else None
        for i, series in enumerate(_series(metric, rel, name)):
            where = f"metrics.{name}.series[{i}]"
            url = str(series.get("endpoint_url", ""))
            labels = _labels(series.get("labels"), rel, where)
            if kind == "counter":
                value, stats = _stat(series, "total", rel, where), ("total",)
                added = value is not None and store.add_counter(name, url, labels, value)
            elif kind == "gauge":
                value, stats = _stat(series, "max", rel, where), ("avg", "max")
                added = value is not None and store.add_gauge_max(name, url, labels, value)
            else:
                continue  # histograms and info metrics feed no summary column
            if added and t0 is not None and name.startswith(SERIES_PREFIXES):
                rows.extend(_slice_rows(series, name, url, labels, stats, t0, rel))
    return store, rows


def json_window(doc: Mapping[str, Any], rel: str) -> tuple[float | None, float | None]:
    """The export's window in epoch seconds: endpoint first/last update, else the timeslices."""
    summary = doc.get("summary")
    info = summary.get("endpoint_info") if isinstance(summary, Mapping) else None
    ends = [
        v.get("last_update_ns")
        for v in (info.values() if isinstance(info, Mapping) else [])
        if isinstance(v, Mapping)
    ]
    last = [number(e, rel, "summary.endpoint_info.last_update_ns") for e in ends if e is not None]
    if not last:
        last = [
            number(ts["end_ns"], rel, "timeslices.end_ns")
            for m in _metrics(doc, rel).values()
            if isinstance(m, Mapping)
            for s in _mappings(m.get("series"))
            for ts in _mappings(s.get("timeslices"))
            if ts.get("end_ns") is not None
        ]
    start = _t0(doc, _metrics(doc, rel), rel)
    return (
        None if start is None else start / 1e9,
        max(last) / 1e9 if last else None,
    )


def _csv_sections(text: str) -> list[tuple[int, list[str]]]:
    sections: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                sections.append((start, current))
            current = []
            continue
        if not current:
            start = lineno
        current.append(line)
    if current:
        sections.append((start, current))
    return sections


def read_csv_dump(text: str, rel: str) -> MetricStore:
    """Counter totals, gauge peaks and info labels of a `server_metrics_export.csv`.

    Raises:
        ParseError: naming the line whose section header or cells are not the documented shape.
    """
    store = MetricStore()
    for start, lines in _csv_sections(text):
        rows = list(csv.reader(lines))
        header = rows[0]
        if header[:4] == ["Endpoint", "Metric", "Key", "Value"]:
            for offset, cells in enumerate(rows[1:], start=1):
                if len(cells) < 4:
                    raise ParseError(
                        rel, f"line {start + offset}", "info row needs Endpoint,Metric,Key,Value"
                    )
                store.info.setdefault(f"{cells[1]}@{endpoint_key(cells[0])}", {})[cells[2]] = cells[
                    3
                ]
            continue
        if header[:3] != ["Endpoint", "Type", "Metric"]:
            raise ParseError(
                rel, f"line {start}", f"unknown section header {','.join(header[:4])!r}"
            )
        label_cols = [c for c in header if c not in _CSV_FIXED and not _STAT_COLUMN.match(c)]
        for offset, cells in enumerate(rows[1:], start=1):
            where = f"line {start + offset}"
            if len(cells) != len(header):
                raise ParseError(rel, where, f"expected {len(header)} cells, got {len(cells)}")
            row = dict(zip(header, cells, strict=True))
            labels = {c: row[c] for c in label_cols if row[c] != ""}
            if row["Type"] == "counter" and "total" in row:
                store.add_counter(
                    row["Metric"], row["Endpoint"], labels, parse_float(row["total"], rel, where)
                )
            elif row["Type"] == "gauge" and "max" in row:
                store.add_gauge_max(
                    row["Metric"], row["Endpoint"], labels, parse_float(row["max"], rel, where)
                )
    return store


def enrich_row(store: MetricStore, rel: str) -> tuple[Row, list[str]]:
    """Spec-decode and server-summary columns of a dump, plus the duplicate-URL note."""
    row = {**server_summary(store), **store_spec_row(store, AL_SOURCE, rel)}
    return row, duplicate_note(store, rel)


def is_json_dump(doc: Any) -> bool:
    """A `server_metrics_export.json` document (metric name -> {type, series})."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("metrics"), Mapping):
        return False
    values = list(doc["metrics"].values())
    return bool(values) and all(isinstance(m, Mapping) and "series" in m for m in values[:5])


def is_csv_dump(src: SourceFile) -> bool:
    """A `server_metrics_export.csv` (its comment banner or a typed section header)."""
    head = src.data[:2048].decode("utf-8", "replace").lstrip("\ufeff")
    return head.startswith("# AIPerf Server Metrics Export (CSV)") or head.startswith(
        "Endpoint,Type,Metric,"
    )


class ServerMetricsJsonReader:
    """aiperf `server_metrics_export.json`: enrichment and time series."""

    name = "aiperf_server_metrics_json"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return is_json_dump(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        store, series = read_json_dump(doc, src.rel)
        row, notes = enrich_row(store, src.rel)
        scope = metric_scope(store, since_start=False, window=json_window(doc, src.rel))
        return ReadResult(enrich=row, series=series, notes=notes, consumed=[src.rel], scope=scope)


class ServerMetricsCsvReader:
    """aiperf `server_metrics_export.csv`: enrichment (no time series in the CSV)."""

    name = "aiperf_server_metrics_csv"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return doc is None and is_csv_dump(src)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        store = read_csv_dump(src.text(), src.rel)
        row, notes = enrich_row(store, src.rel)
        scope = metric_scope(store, since_start=False)
        return ReadResult(enrich=row, notes=notes, consumed=[src.rel], scope=scope)


FILE_READERS = (ServerMetricsJsonReader(), ServerMetricsCsvReader())
