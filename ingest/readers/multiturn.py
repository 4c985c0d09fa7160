"""Pre-aiperf multi-turn (kv-cache-tester) agentic runs (formats.md §9.2).

A run directory holds `metrics_server_metrics.csv`, vLLM's `/metrics` polled about once a second
(usage in percent, counters cumulative since server start), with `vllm_command.txt`, the vLLM
`--config` YAML, `status.txt` and the trace-replay command. It has no client latencies (the
`trace_replay/detailed_results.csv` is not kept), so it is not a point: its time series, peak KV
usage, preemptions and server flags enrich the flat agentic aggregate of the same run
(`agg_<exp with bs<N> as users<N>>.json`), which already carries the cache hit rates.

A sweep's `experiment_summary.csv` (tp x bs x offload grid, latencies in ms, hit rates in %) is
one point per row; it records neither model nor hardware, so those stay empty with a warning.
"""

from __future__ import annotations

import csv
from itertools import pairwise
from typing import Any

import yaml

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._metrics_common import parse_float
from ingest.readers.base import ReadResult, Row, RowReject, SourceFile, starts_after_bom
from ingest.readers.vllm_command import (
    config_columns,
    is_serve_command,
    parse_flags,
    serve_flags,
    split_command,
)
from ingest.untrusted.yaml_load import load_yaml

_POLLED_HEADER = "timestamp_sec,relative_time_sec,kv_cache_usage_pct"
_POLLED_HEADER_BYTES = _POLLED_HEADER.encode()
_SUMMARY_HEADER = "exp_name,tp,bs,offload,num_requests"
_GAP_S = 10.0
_SUMMARY_LATENCY = {"ttft": "ttft", "tpot": "tpot", "latency": "e2el"}
_SUMMARY_STATS = {"mean": "mean", "p50": "median", "p90": "p90", "p99": "p99", "p999": "p99.9"}


def read_polled(text: str, rel: str) -> list[dict[str, float]]:
    """Rows of a polled `/metrics` CSV, every cell a number.

    Raises:
        ParseError: naming the line and column that is not a number, or an empty file.
    """
    reader = csv.DictReader(text.splitlines())
    rows: list[dict[str, float]] = []
    for lineno, raw in enumerate(reader, start=2):
        if None in raw or any(v is None for v in raw.values()):
            raise ParseError(rel, f"line {lineno}", "row length differs from the header")
        rows.append({k: parse_float(v, rel, f"line {lineno} {k}") for k, v in raw.items()})
    if not rows:
        raise ParseError(rel, "", "polled metrics CSV has a header but no samples")
    return rows


def polled_columns(rows: list[dict[str, float]], rel: str) -> tuple[Row, list[Row], list[str]]:
    """Peak KV usage, preemptions over the capture, the time series and gap notes."""
    row: Row = {}
    for col, name in (
        (Col.PEAK_GPU_KV_USAGE, "kv_cache_usage_pct"),
        (Col.PEAK_CPU_KV_USAGE, "cpu_kv_cache_usage_pct"),
    ):
        if name in rows[0]:
            row[col] = max(r[name] for r in rows) / 100.0
    if "num_preemptions_total" in rows[0]:
        row[Col.NUM_PREEMPTIONS] = (
            rows[-1]["num_preemptions_total"] - rows[0]["num_preemptions_total"]
        )
    series = [
        {
            "metric": name,
            "labels": "{}",
            "t": r["relative_time_sec"],
            "value": value,
            "point_key": None,
        }
        for r in rows
        for name, value in r.items()
        if name not in ("timestamp_sec", "relative_time_sec")
    ]
    times = [r["relative_time_sec"] for r in rows]
    gaps = [(b - a, a) for a, b in pairwise(times) if b - a > _GAP_S]
    warnings = [
        f"/metrics polling: no samples for {gap:.0f} s after t={at:.0f} s (peaks may be missed)"
        for gap, at in gaps
    ]
    if warnings:
        row[Col.WARNINGS] = warnings  # a data-quality note for the enriched point
    return row, series, [f"{rel}: {w}" for w in warnings]


def _server_flags(files: list[SourceFile]) -> tuple[Row, list[str], list[str]]:
    cli: dict[str, Any] | None = None
    from_yaml: dict[str, Any] = {}
    used: list[str] = []
    for src in files:
        if is_serve_command(src.data):
            cli = serve_flags(src.text(), src.rel)
            used.append(src.rel)
    for src in files:
        if (
            cli
            and src.name.endswith((".yaml", ".yml"))
            and str(cli.get("config", "")).endswith(src.name)
        ):
            try:
                loaded = load_yaml(src.text())
            except yaml.YAMLError as exc:
                raise ParseError(src.rel, "", f"vLLM --config is not valid YAML: {exc}") from exc
            if isinstance(loaded, dict):
                from_yaml = {str(k).replace("_", "-"): v for k, v in loaded.items()}
                used.append(src.rel)
    if cli is None:
        return {}, used, ["no vllm_command.txt: server flags unknown"]
    row, notes = config_columns(
        {**from_yaml, **cli}, used[0]
    )  # the command line overrides --config
    return row, used, notes


class MultiturnRunReader:
    """A kv-cache-tester run directory: enrichment and time series for its flat aggregate."""

    name = "multiturn_run"

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        return any(starts_after_bom(src.data, _POLLED_HEADER_BYTES) for src in files)

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        polled = next(s for s in files if starts_after_bom(s.data, _POLLED_HEADER_BYTES))
        enrich, series, notes = polled_columns(read_polled(polled.text(), polled.rel), polled.rel)
        flags, used, flag_notes = _server_flags(files)
        enrich.update(flags)
        used.append(polled.rel)
        for src in files:
            text = src.data[:64].decode("utf-8", "replace").strip()
            if src.name == "status.txt" and text:
                used.append(src.rel)
                if text.upper() != "SUCCESS":
                    notes.append(f"{src.rel}: run status {text!r}")
            elif "trace_replay_tester" in src.data[:512].decode("utf-8", "replace"):
                users = parse_flags(split_command(src.text(), src.rel)).get("max-users")
                used.append(src.rel)
                notes.append(f"{src.rel}: trace replay with {users} users")
        notes.append(
            f"{polled.rel}: server-side /metrics only (no client latencies), so no point of its "
            "own; these columns enrich the run's flat agentic aggregate (agg_..._users<N>_...json)"
        )
        return ReadResult(
            enrich=enrich,
            series=series,
            notes=notes + flag_notes,
            consumed=[polled.rel, *sorted(set(used) - {polled.rel})],
        )


def _cell(raw: dict[str, str], key: str, rel: str, where: str) -> float | None:
    value = raw.get(key, "")
    return (
        None if value is None or value.strip() == "" else parse_float(value, rel, f"{where} {key}")
    )


def summary_row(raw: dict[str, str], rel: str, where: str) -> Row:
    """One `experiment_summary.csv` row as a canonical point (ms -> s, % -> fraction).

    Raises:
        ParseError: naming the row and column that cannot be read.
    """
    tp, bs = _cell(raw, "tp", rel, where), _cell(raw, "bs", rel, where)
    offload = raw.get("offload", "")
    if tp is None or bs is None or offload not in ("on", "off"):
        raise ParseError(
            rel, where, f"needs tp, bs and offload on|off, got {raw.get('exp_name')!r}"
        )
    row: Row = {
        Col.SCENARIO: "agentic-coding",
        Col.SCHEMA_VARIANT: "multiturn_summary",
        Col.TP: int(tp),
        Col.NUM_GPUS: int(tp),
        Col.CONC: int(bs),
        Col.KV_OFFLOADING: "dram" if offload == "on" else "none",
        Col.WARNINGS: ["experiment_summary.csv records no model, hardware or precision"],
    }
    for col, key in (
        (Col.REQUEST_THROUGHPUT, "throughput_rps"),
        (Col.INPUT_TPUT, "input_throughput_tps"),
        (Col.TOTAL_TPUT, "total_throughput_tps"),
        (Col.NUM_REQUESTS_SUCCESSFUL, "num_requests"),
    ):
        if (value := _cell(raw, key, rel, where)) is not None:
            row[col] = int(value) if col is Col.NUM_REQUESTS_SUCCESSFUL else value
    if row.get(Col.TOTAL_TPUT) is not None and row.get(Col.INPUT_TPUT) is not None:
        row[Col.OUTPUT_TPUT] = row[Col.TOTAL_TPUT] - row[Col.INPUT_TPUT]
    for theirs, lat in _SUMMARY_LATENCY.items():
        for prefix, stat in _SUMMARY_STATS.items():
            if (value := _cell(raw, f"{prefix}_{theirs}_ms", rel, where)) is not None:
                row[f"{stat}_{lat}"] = value / 1000.0
    for col, key in (
        (Col.GPU_PREFIX_CACHE_HIT_RATE, "gpu_hit_rate"),
        (Col.EXTERNAL_PREFIX_CACHE_HIT_RATE, "cpu_hit_rate"),
    ):
        if (value := _cell(raw, key, rel, where)) is not None:
            row[col] = value / 100.0
    return row


class ExperimentSummaryReader:
    """A multi-turn sweep's `experiment_summary.csv`: one point per row."""

    name = "multiturn_summary"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return doc is None and starts_after_bom(src.data, _SUMMARY_HEADER.encode())

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        points: list[Row] = []
        rejects: list[RowReject] = []
        for lineno, raw in enumerate(csv.DictReader(src.text().splitlines()), start=2):
            where = f"line {lineno}"
            try:
                points.append(summary_row(raw, src.rel, where))
            except ParseError as exc:
                rejects.append(RowReject(exc.field, exc.reason, raw.get("exp_name") or where))
        notes = [
            "the interactivity column is 1000/p50_tpot_ms; median_intvty is derived the same way"
        ]
        return ReadResult(points=points, rejects=rejects, notes=notes, consumed=[src.rel])


UNIT_READERS = (MultiturnRunReader(),)
FILE_READERS = (ExperimentSummaryReader(),)
