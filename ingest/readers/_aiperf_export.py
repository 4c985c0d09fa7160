"""aiperf run aggregates: `profile_export_aiperf.json` (schema 1.0-1.5 and the older `records`
export) and `.csv` (formats.md §3.4, docs/formats.d/aiperf.md).

aiperf 0.3+ writes one top-level object per metric (`schema_version` 1.0 onwards; 1.2 adds
`run_info`); the older export nests them under `records{tag: {...}}` (and names TTFT `ttft`); the
CSV has a `Metric,avg,...` table and a `Metric,Value` table. All three become one `Stat` per metric.
Latencies become seconds; aiperf ITL is per request (e2e - ttft)/(osl - 1), so it is also the TPOT,
and interactivity is 1/ITL at each percentile, the AgentX v3 definition (§0.4, §3.6).

The load lives in `input_config`: `loadgen.concurrency` / `loadgen.request_rate` up to aiperf 0.8,
`phases[]` (the non-warmup phase's `concurrency` or `rate`) from the 0.9 config rewrite on.
GenAI-Perf's `profile_export_genai_perf.json` has the same metric shape; `is_genai_perf_export`
tells the two apart so each reader claims only its own.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._metrics_common import number, parse_float
from ingest.readers.base import Row, SourceFile, starts_after_bom

_TO_SECONDS = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "seconds": 1.0, "us": 1e-6, "ns": 1e-9}
_LATENCIES = (
    ("ttft", "time_to_first_token"),
    ("e2el", "request_latency"),
    ("itl", "inter_token_latency"),
)
_STATS = (
    ("mean", "avg"),
    ("median", "p50"),
    ("p75", "p75"),
    ("p90", "p90"),
    ("p95", "p95"),
    ("p99", "p99"),
)
_OLD_TAGS = {"ttft": "time_to_first_token", "ttst": "time_to_second_token"}
_CSV_ALIASES = {
    "total_input_sequence_length": "total_isl",
    "total_output_sequence_length": "total_osl",
}
_CSV_LABEL = re.compile(r"^(?P<label>.*?)\s*(?:\((?P<unit>[^()]*)\))?$")


@dataclass(frozen=True)
class Stat:
    """One aiperf metric: its unit and statistics (avg, p50, ...; None where aiperf wrote null)."""

    unit: str
    values: Mapping[str, float]


def _stat(entry: Mapping[str, Any], rel: str, key: str) -> Stat:
    values = {
        k: number(v, rel, f"{key}.{k}")
        for k, v in entry.items()
        if k not in {"unit", "tag", "header"} and v is not None
    }
    return Stat(str(entry.get("unit", "")), values)


def stats_from_json(doc: Mapping[str, Any], rel: str) -> tuple[dict[str, Stat], str]:
    """Metric statistics of a profile export and its schema variant (aiperf / aiperf_legacy).

    Raises:
        ParseError: when a metric's statistic is not a finite number.
    """
    records = doc.get("records")
    legacy = isinstance(records, Mapping)
    source = records if isinstance(records, Mapping) else doc
    out: dict[str, Stat] = {}
    for key, entry in source.items():
        if isinstance(entry, Mapping) and "unit" in entry:
            name = _OLD_TAGS.get(str(key), str(key))
            out[name] = _stat(entry, rel, f"records.{key}" if legacy else str(key))
    return out, "aiperf_legacy" if legacy else "aiperf"


def stats_from_csv(text: str, rel: str) -> dict[str, Stat]:
    """Metric statistics of a `profile_export_aiperf.csv` (both tables).

    Raises:
        ParseError: naming the line whose header or value cannot be read.
    """
    out: dict[str, Stat] = {}
    header: list[str] | None = None
    for lineno, cells in enumerate(csv.reader(text.splitlines()), start=1):
        if not cells or not any(c.strip() for c in cells):
            header = None
            continue
        if header is None:
            if cells[0] != "Metric":
                raise ParseError(
                    rel, f"line {lineno}", f"expected a `Metric,...` header, got {cells[0]!r}"
                )
            header = cells
            continue
        m = _CSV_LABEL.match(cells[0].strip())
        label = m["label"] if m else cells[0]
        key = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
        names = ["avg"] if header[1:] == ["Value"] else header[1:]
        values = {
            n: parse_float(v, rel, f"line {lineno}")
            for n, v in zip(names, cells[1:], strict=False)
            if v.strip()
        }
        out[_CSV_ALIASES.get(key, key)] = Stat((m["unit"] if m else None) or "", values)
    return out


def _avg(stats: Mapping[str, Stat], name: str) -> float | None:
    stat = stats.get(name)
    return stat.values.get("avg") if stat else None


def metrics_row(stats: Mapping[str, Stat], rel: str) -> Row:
    """Canonical metric columns from aiperf statistics.

    Raises:
        ParseError: when a latency has a unit that is not a time.
    """
    row: Row = {}
    for lat, key in _LATENCIES:
        stat = stats.get(key)
        if stat is None:
            continue
        scale = _TO_SECONDS.get(stat.unit.lower())
        if scale is None:
            raise ParseError(
                rel, key, f"latency unit {stat.unit!r} is not a time unit (ms, s, us, ns)"
            )
        for ours, theirs in _STATS:
            if theirs in stat.values:
                row[f"{ours}_{lat}"] = stat.values[theirs] * scale
    for ours, _ in _STATS:
        itl = row.get(f"{ours}_itl")
        if itl is not None:
            row[f"{ours}_tpot"] = itl
            if itl > 0:
                row[f"{ours}_intvty"] = 1.0 / itl
    if any(k.endswith("_intvty") for k in row):
        row[Col.INTVTY_DEFINITION] = "inv_itl_percentile"
    for col, name in (
        (Col.TOTAL_TPUT, "total_token_throughput"),
        (Col.OUTPUT_TPUT, "output_token_throughput"),
        (Col.INPUT_TPUT, "input_token_throughput"),
        (Col.REQUEST_THROUGHPUT, "request_throughput"),
        (Col.DURATION, "benchmark_duration"),
        (Col.TOTAL_INPUT_TOKENS, "total_isl"),
        (Col.TOTAL_OUTPUT_TOKENS, "total_osl"),
    ):
        value = _avg(stats, name)
        if value is not None:
            row[col] = (
                int(value) if col in (Col.TOTAL_INPUT_TOKENS, Col.TOTAL_OUTPUT_TOKENS) else value
            )
    duration = row.get(Col.DURATION)
    if row.get(Col.INPUT_TPUT) is None and row.get(Col.TOTAL_INPUT_TOKENS) is not None and duration:
        row[Col.INPUT_TPUT] = row[Col.TOTAL_INPUT_TOKENS] / duration
    for col, name in (
        (Col.MEAN_INPUT_LEN, "input_sequence_length"),
        (Col.MEAN_OUTPUT_LEN, "output_sequence_length"),
    ):
        if (value := _avg(stats, name)) is not None:
            row[col] = value
    ok, errors, completed = (
        _avg(stats, n) for n in ("request_count", "error_request_count", "completed_request_count")
    )
    if ok is not None:
        row[Col.NUM_REQUESTS_SUCCESSFUL] = int(ok)
        total = int(completed if completed is not None else ok + (errors or 0.0))
        row[Col.NUM_REQUESTS_TOTAL] = total
        # aiperf counts only profiled requests (no warmup), so failed / issued is the error rate;
        # a missing error_request_count means none failed (formats.md §3.8).
        if total > 0:
            row[Col.ERROR_RATE] = max(0.0, (total - int(ok)) / total)
    hit = stats.get("theoretical_prefix_cache_hit")
    if hit is not None:
        hits, count = hit.values.get("sum"), hit.values.get("count")
        row[Col.THEORETICAL_CACHE_HIT_RATE] = (
            hits / count if hits is not None and count else (hit.values.get("avg", 0.0) / 100.0)
        )
    return row


def is_genai_perf_export(doc: Any) -> bool:
    """A GenAI-Perf `profile_export_genai_perf.json`: aiperf's metric shape, GenAI-Perf's config.

    GenAI-Perf's `input_config` is its argparse namespace (top-level `model`, `service_kind`,
    `concurrency`, ...; up to 0.0.12) or its config object (`model_names`, `perf_analyzer`; 0.0.13
    on); aiperf's nests the model under `endpoint` or `models` and never writes those keys.
    """
    if not isinstance(doc, Mapping) or "schema_version" in doc or "aiperf_version" in doc:
        return False
    config = doc.get("input_config")
    if not isinstance(config, Mapping):
        return False
    return "perf_analyzer" in config or "model_names" in config or "service_kind" in config


def _phases(config: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    phases = config.get("phases")
    if isinstance(phases, Mapping):  # `phases.<name>: {...}` in some config dumps
        phases = [{"name": k, **v} for k, v in phases.items() if isinstance(v, Mapping)]
    return [p for p in phases if isinstance(p, Mapping)] if isinstance(phases, list) else []


def profiling_phase(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The measured phase of an aiperf 0.9+ `input_config.phases` list ({} when there is none)."""
    measured = [
        p
        for p in _phases(config)
        if not p.get("exclude_from_results") and str(p.get("name", "")).lower() != "warmup"
    ]
    named = [p for p in measured if str(p.get("name", "")).lower() == "profiling"]
    return (named or measured or [{}])[0]


def load_of(config: Mapping[str, Any], rel: str) -> tuple[int | None, float | None]:
    """(concurrency, request rate) of an aiperf `input_config`; a rate-paced run keeps only its rate.

    aiperf <= 0.8 writes `loadgen.concurrency` / `loadgen.request_rate`; 0.9+ writes `phases[]`,
    whose measured phase has `concurrency` (type concurrency) or `rate` (poisson, constant, ...).
    A rate with a concurrency cap is a request-rate point (its cap goes to the metadata).

    Raises:
        ParseError: when the concurrency or rate is not a positive number.
    """
    phase = profiling_phase(config)
    loadgen = config.get("loadgen")
    source = phase or (loadgen if isinstance(loadgen, Mapping) else {})
    where = "input_config.phases" if phase else "input_config.loadgen"
    rate = source.get("rate", source.get("request_rate"))
    conc = source.get("concurrency")
    if rate is not None:
        value = rate if isinstance(rate, int | float) and not isinstance(rate, bool) else None
        if value is None or not value > 0:
            raise ParseError(
                rel, f"{where}.rate", f"expected a positive request rate, got {rate!r}"
            )
        return None, float(value)
    if conc is not None:
        if isinstance(conc, bool) or not isinstance(conc, int | float) or conc != int(conc):
            raise ParseError(rel, f"{where}.concurrency", f"expected an integer, got {conc!r}")
        return int(conc), None
    return None, None


def is_profile_json(doc: Any) -> bool:
    """An aiperf run aggregate (top-level metrics, or the older `records` object)."""
    if not isinstance(doc, Mapping) or "metrics" in doc or is_genai_perf_export(doc):
        return False
    records = doc.get("records")
    if isinstance(records, Mapping):
        return any(isinstance(v, Mapping) and "tag" in v and "unit" in v for v in records.values())
    return any(
        isinstance(doc.get(k), Mapping) and "unit" in doc[k]
        for k in ("request_count", "request_latency", "benchmark_duration")
    )


def is_profile_csv(src: SourceFile) -> bool:
    """An aiperf `profile_export_aiperf.csv` (first table header `Metric,avg,min,max,...`).

    GenAI-Perf's `*_genai_perf.csv` starts the same way and is left to its own reader.
    """
    return not src.name.endswith("_genai_perf.csv") and starts_after_bom(src.data, b"Metric,avg,")
