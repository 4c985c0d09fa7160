"""vLLM `/metrics` scrapes in Prometheus text format, parsed with `prometheus_client.parser`.

One scrape gives counters since server start (al_source `prometheus_snapshot`: warmup and every
earlier benchmark included). Two scrapes of one server, before and after a benchmark, give the
benchmark's deltas (al_source `prometheus_delta`), as the golden-AL collectors compute
AL = 1 + Δaccepted / Δdrafts (formats.md §3.9, §4.1). Which scrape is "after" is read from the
counters, not the file names: every counter of the later scrape is at least its earlier value.
Counters carry no point; they enrich the point of their unit or of the paired aggregate.
"""

from __future__ import annotations

import math
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from ingest.errors import ParseError
from ingest.readers._metrics_common import MetricStore, family, server_summary, store_spec_row
from ingest.readers.base import ReadResult, Row, SourceFile

Counters = dict[tuple[str, tuple[tuple[str, str], ...]], float]


_ASCII_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.lstrip() strips


def is_prometheus_text(src: SourceFile) -> bool:
    """Prometheus exposition text: starts with `# HELP`/`# TYPE` and declares a type."""
    data = src.data
    i, n = 0, min(len(data), 8192)
    while i < n and data[i] in _ASCII_SPACE:
        i += 1
    if not data.startswith((b"# HELP ", b"# TYPE "), i, 8192):
        return False  # the common case, decided without copying the head
    head = data[:8192].lstrip()
    return head.startswith((b"# HELP ", b"# TYPE ")) and b"\n# TYPE " in b"\n" + head


def parse_scrape(text: str, rel: str) -> tuple[Counters, dict[str, float]]:
    """Counter values and gauge values of one scrape, keyed by (family, sorted labels).

    `_created` timestamps are dropped; counter names lose `_total`.

    Raises:
        ParseError: when the text is not valid exposition format or holds a non-finite counter.
    """
    counters: Counters = {}
    gauges: dict[str, float] = {}
    try:
        families = list(text_string_to_metric_families(text))
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ParseError(rel, "", f"not valid Prometheus text exposition: {exc}") from exc
    for fam in families:
        for sample in fam.samples:
            if sample.name.endswith("_created"):
                continue
            value = float(sample.value)
            key = (family(sample.name), tuple(sorted(sample.labels.items())))
            if fam.type == "counter" or (fam.type == "unknown" and sample.name.endswith("_total")):
                if not math.isfinite(value):
                    raise ParseError(rel, sample.name, f"counter value must be finite, got {value}")
                counters[key] = value
            elif fam.type == "gauge" and math.isfinite(value):
                name = sample.name
                gauges[name] = max(value, gauges.get(name, value))
    return counters, gauges


def _store(counters: Counters, gauges: dict[str, float] | None = None) -> MetricStore:
    store = MetricStore()
    for (name, labels), value in counters.items():
        store.add_counter(name, "", dict(labels), value)
    for name, value in (gauges or {}).items():
        store.add_gauge_max(name, "", {}, value)
    return store


def snapshot_row(text: str, rel: str) -> Row:
    """Enrichment columns of one scrape: totals since server start.

    Raises:
        ParseError: when the scrape cannot be parsed.
    """
    counters, _ = parse_scrape(text, rel)
    store = _store(counters)
    # Gauges are one instant of the scrape, not the run's peak: only counter-based columns.
    return {**server_summary(store), **store_spec_row(store, "prometheus_snapshot", rel)}


def delta_row(first: tuple[str, str], second: tuple[str, str]) -> tuple[Row, str, str]:
    """Enrichment columns from two scrapes of one server; also returns (before, after) paths.

    Args:
        first, second: (text, rel) of each scrape, in any order.

    Raises:
        ParseError: when counters moved both ways (not one server, or it restarted in between).
    """
    (a, rel_a), (b, rel_b) = first, second
    ca, _ = parse_scrape(a, rel_a)
    cb, _ = parse_scrape(b, rel_b)
    shared = ca.keys() & cb.keys()
    if not shared:
        raise ParseError(
            rel_b, "", f"shares no counter series with {rel_a}: not two scrapes of one server"
        )
    up = any(cb[k] > ca[k] for k in shared)
    down = any(cb[k] < ca[k] for k in shared)
    if up and down:
        name = next(k[0] for k in shared if cb[k] < ca[k])
        raise ParseError(
            rel_b,
            name,
            f"counters rose and fell relative to {rel_a}: the server restarted "
            "between the scrapes or they come from different servers",
        )
    before, after, rel_before, rel_after = (
        (ca, cb, rel_a, rel_b) if not down else (cb, ca, rel_b, rel_a)
    )
    deltas = {k: after[k] - before[k] for k in shared}
    store = _store(deltas)
    return (
        {**server_summary(store), **store_spec_row(store, "prometheus_delta", rel_after)},
        rel_before,
        rel_after,
    )


class PrometheusSnapshotReader:
    """One `/metrics` scrape: counter totals as enrichment."""

    name = "prometheus_snapshot"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return doc is None and is_prometheus_text(src)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        row = snapshot_row(src.text(), src.rel)
        note = "one /metrics scrape: counters since server start (warmup and earlier runs included)"
        if not row:
            return ReadResult(
                notes=[
                    "/metrics scrape without vLLM spec-decode or cache counters: nothing to store"
                ],
                consumed=[src.rel],
            )
        return ReadResult(enrich=row, notes=[note], consumed=[src.rel])


class PrometheusPairReader:
    """Exactly two `/metrics` scrapes in one directory: the benchmark's counter deltas."""

    name = "prometheus_delta"

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        return sum(is_prometheus_text(src) for src in files) == 2

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        a, b = (src for src in files if is_prometheus_text(src))
        row, before, after = delta_row((a.text(), a.rel), (b.text(), b.rel))
        return ReadResult(
            enrich=row, notes=[f"counter deltas {before} -> {after}"], consumed=[after, before]
        )


UNIT_READERS = (PrometheusPairReader(),)
FILE_READERS = (PrometheusSnapshotReader(),)
