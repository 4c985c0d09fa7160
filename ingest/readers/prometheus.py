"""vLLM `/metrics` scrapes in Prometheus text format, parsed with `prometheus_client.parser`.

One scrape gives counters since server start (al_source `prometheus_snapshot`: warmup and every
earlier benchmark included). Two scrapes of one server, before and after a benchmark, give the
benchmark's deltas (al_source `prometheus_delta`), as the golden-AL collectors compute
AL = 1 + Δaccepted / Δdrafts (formats.md §3.9, §4.1). Which scrape is "after" is read from the
counters, not the file names: every counter of the later scrape is at least its earlier value.
Counters carry no point; they enrich the point of their unit or of the paired aggregate, and
their scope (the `model_name` label, the server start from `_created`, token counters) says which
point that is when there are several (`ingest.attach`).
"""

from __future__ import annotations

import math
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._metrics_common import (
    GPU_HIT_RATE_GAUGE,
    MetricStore,
    family,
    metric_scope,
    server_summary,
    store_spec_row,
)
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


def _parse(text: str, rel: str) -> tuple[Counters, dict[str, float], float | None, float | None]:
    """Counters, gauges, the earliest `_created` time and the latest sample timestamp (epoch s).

    Raises:
        ParseError: when the text is not valid exposition format or holds a non-finite counter.
    """
    counters: Counters = {}
    gauges: dict[str, float] = {}
    created: float | None = None
    stamped: float | None = None
    # Imported here: most ingests read no scrape, and the parser's package costs a start-up
    # about 30 ms.
    from prometheus_client.parser import text_string_to_metric_families

    try:
        families = list(text_string_to_metric_families(text))
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ParseError(rel, "", f"not valid Prometheus text exposition: {exc}") from exc
    for fam in families:
        for sample in fam.samples:
            value = float(sample.value)
            if sample.timestamp is not None:
                ts = float(sample.timestamp)
                stamped = ts if stamped is None else max(stamped, ts)
            if sample.name.endswith("_created"):
                # When each series was created: the server's start (vLLM creates them at boot).
                if math.isfinite(value) and value > 0:
                    created = value if created is None else min(created, value)
                continue
            key = (family(sample.name), tuple(sorted(sample.labels.items())))
            if fam.type == "counter" or (fam.type == "unknown" and sample.name.endswith("_total")):
                if not math.isfinite(value):
                    raise ParseError(rel, sample.name, f"counter value must be finite, got {value}")
                counters[key] = value
            elif fam.type == "gauge" and math.isfinite(value):
                name = sample.name
                gauges[name] = max(value, gauges.get(name, value))
    return counters, gauges, created, stamped


def parse_scrape(text: str, rel: str) -> tuple[Counters, dict[str, float]]:
    """Counter values and gauge values of one scrape, keyed by (family, sorted labels).

    `_created` timestamps are dropped; counter names lose `_total`.

    Raises:
        ParseError: when the text is not valid exposition format or holds a non-finite counter.
    """
    counters, gauges, _, _ = _parse(text, rel)
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
    return snapshot(text, rel)[0]


def snapshot(text: str, rel: str) -> tuple[Row, Row]:
    """Enrichment columns of one scrape and its scope (models, server start, token totals).

    Raises:
        ParseError: when the scrape cannot be parsed.
    """
    counters, gauges, created, stamped = _parse(text, rel)
    store = _store(counters)
    # Gauges are one instant of the scrape, not the run's peak: only counter-based columns, and
    # vLLM V0's hit-rate gauge in its own column (it is not InferenceX's hits / queries).
    row = {**server_summary(store), **store_spec_row(store, "prometheus_snapshot", rel)}
    if GPU_HIT_RATE_GAUGE in gauges:
        row[Col.GPU_PREFIX_CACHE_HIT_RATE_GAUGE] = gauges[GPU_HIT_RATE_GAUGE]
    return row, metric_scope(store, since_start=True, window=(created, stamped))


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


def delta_scope(first: tuple[str, str], second: tuple[str, str]) -> Row:
    """The scope of a scrape pair: its models, the window between two stamped scrapes, deltas.

    Raises:
        ParseError: when either scrape cannot be parsed.
    """
    ca, _, _, ta = _parse(*first)
    cb, _, _, tb = _parse(*second)
    shared = ca.keys() & cb.keys()
    before, after = (ca, cb) if all(cb[k] >= ca[k] for k in shared) else (cb, ca)
    window = (min(ta, tb), max(ta, tb)) if ta is not None and tb is not None else None
    store = _store({k: after[k] - before[k] for k in shared})
    return metric_scope(store, since_start=False, window=window)


class PrometheusSnapshotReader:
    """One `/metrics` scrape: counter totals as enrichment."""

    name = "prometheus_snapshot"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return doc is None and is_prometheus_text(src)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        row, scope = snapshot(src.text(), src.rel)
        note = "one /metrics scrape: counters since server start (warmup and earlier runs included)"
        if not row:
            return ReadResult(
                notes=[
                    "/metrics scrape without vLLM spec-decode or cache counters: nothing to store"
                ],
                consumed=[src.rel],
            )
        return ReadResult(enrich=row, notes=[note], consumed=[src.rel], scope=scope)


class PrometheusPairReader:
    """Exactly two `/metrics` scrapes in one directory: the benchmark's counter deltas."""

    name = "prometheus_delta"

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        return sum(is_prometheus_text(src) for src in files) == 2

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        a, b = (src for src in files if is_prometheus_text(src))
        row, before, after = delta_row((a.text(), a.rel), (b.text(), b.rel))
        return ReadResult(
            enrich=row,
            notes=[f"counter deltas {before} -> {after}"],
            consumed=[after, before],
            scope=delta_scope((a.text(), a.rel), (b.text(), b.rel)),
        )


UNIT_READERS = (PrometheusPairReader(),)
FILE_READERS = (PrometheusSnapshotReader(),)
