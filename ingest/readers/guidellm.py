"""GuideLLM benchmark reports: `benchmarks.json` / `benchmarks.yaml` (`guidellm benchmark --output-path`).

Source: vllm-project/guidellm (neuralmagic/guidellm until mid 2025), the serialized
`GenerativeBenchmarksReport`: one entry of `benchmarks[]` per benchmark of the run (a `sweep`
profile runs synchronous, throughput, then constant rates in between), each one point here.

Versions (the report shape; JSON and YAML hold the same model):

- 0.2-0.3 (Apr-Sep 2025): `{"benchmarks": [...]}` and nothing else, so no version is recorded;
  each benchmark has `args.strategy` and `args.profile`, `worker.backend_model`,
  `request_loader.data` (`"prompt_tokens=256,output_tokens=128"`), `request_totals`, `duration`.
- 0.4-0.5 (`metadata.version: 1`): `metadata.guidellm_version`, a top-level `args` (model, data,
  profile); each benchmark has `config.strategy`, `config.backend.model`, `config.requests.data`,
  `scheduler_metrics` (the measured window) and `metrics.request_totals`.
- 0.6 onward (`metadata.version: 2`): a top-level `config` (the scenario) replaces `args`; the
  benchmarks keep the 0.4 shape.

Every metric is a status distribution `{successful, errored, incomplete, total}` of
`{mean, median, percentiles: {p001 .. p999}}`; the successful requests' distribution is read.

Quirks:

- The strategy gives the load: `synchronous` is concurrency 1, `concurrent` its `streams`,
  `constant` / `poisson` their `rate` (req/s; a `max_concurrency` cap
  goes to `metadata.concurrency_cap`), `throughput` its `max_concurrency`, or an infinite request
  rate when uncapped (every request at once).
- GuideLLM's `inter_token_latency_ms` is per request (last token - first token) / (output tokens
  - 1): what the schema calls TPOT, so it fills `*_tpot` and `*_itl`; its
  `time_per_output_token_ms` counts the first token in and is kept in `metadata` only.
- Latencies are in ms (`*_ms`) except `request_latency`, in seconds.
- Throughputs are the successful requests' token and request totals over the benchmark's
  measured window (`duration`, or `scheduler_metrics.measure_end_time - measure_start_time`), as
  vLLM computes them. GuideLLM's own `*_per_second` means (a time-weighted rate distribution, what
  its console prints) are kept in `metadata`.
- The HTML and CSV reports GuideLLM writes beside it hold the same benchmarks: recognised and
  ignored with a note.
- `incomplete` requests were cut off when the benchmark's time ran out: they are not failures,
  so `num_requests_total` is successful + errored and the incomplete count is in `metadata`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._metrics_common import number
from ingest.readers.base import ReadResult, Row, RowReject, SourceFile
from ingest.untrusted.yaml_load import load_yaml

TOOL = "guidellm"
_YAML_NAMES = (".yaml", ".yml")
_LATENCIES = (
    ("time_to_first_token_ms", ("ttft",), 1e-3),
    ("inter_token_latency_ms", ("tpot", "itl"), 1e-3),
    ("request_latency", ("e2el",), 1.0),
)
_PERCENTILES = (("p75", "p75"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"), ("p99.9", "p999"))
_YAML_TOP = re.compile(rb"(?m)^benchmarks:")  # the report's top-level list
_SYNTH = re.compile(r"(prompt_tokens|output_tokens)\s*=\s*(\d+)")


def _is_benchmark(entry: Any) -> bool:
    return isinstance(entry, Mapping) and (
        entry.get("type_") == "generative_benchmark"
        or (isinstance(entry.get("metrics"), Mapping) and ("args" in entry or "config" in entry))
    )


def _is_v01(doc: Any) -> bool:
    """GuideLLM 0.1's `GuidanceReport`: `benchmarks[].benchmarks[]` of `{mode, rate, results}`."""
    first = doc.get("benchmarks")[0] if isinstance(doc.get("benchmarks"), list) else None
    inner = first.get("benchmarks") if isinstance(first, Mapping) else None
    return (
        isinstance(inner, list)
        and bool(inner)
        and isinstance(inner[0], Mapping)
        and {"mode", "results", "errors"} <= inner[0].keys()
    )


def is_report(doc: Any) -> bool:
    """True for a GuideLLM report: a `benchmarks` list of generative benchmarks, or an empty one
    under GuideLLM's `metadata.guidellm_version`."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("benchmarks"), list):
        return False
    if doc["benchmarks"] and _is_v01(doc):
        return True
    meta = doc.get("metadata")
    if isinstance(meta, Mapping) and "guidellm_version" in meta:
        return True
    return any(_is_benchmark(b) for b in doc["benchmarks"])


def _yaml_doc(src: SourceFile) -> Any:
    import yaml

    try:
        return load_yaml(src.text())
    except yaml.YAMLError as exc:
        raise ParseError(src.rel, "", f"GuideLLM YAML report is not valid YAML: {exc}") from exc


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


class _Bench:
    """One benchmark of a report, read with the file's path and the benchmark's index."""

    def __init__(self, rel: str, index: int, entry: Mapping[str, Any]) -> None:
        self.rel, self.index, self.entry = rel, index, entry
        self.where = f"benchmarks[{index}]"

    def error(self, field: str, reason: str) -> ParseError:
        return ParseError(self.rel, f"{self.where}.{field}", reason)

    def num(self, value: Any, field: str) -> float:
        return number(value, self.rel, f"{self.where}.{field}")

    def strategy(self) -> Mapping[str, Any]:
        strategy = _get(self.entry, "config", "strategy") or _get(self.entry, "args", "strategy")
        if not isinstance(strategy, Mapping) or not isinstance(strategy.get("type_"), str):
            raise self.error(
                "config.strategy", "GuideLLM benchmark without a scheduling strategy (type_)"
            )
        return strategy

    def load(self, row: Row, meta: dict[str, Any]) -> None:
        strategy = self.strategy()
        kind = strategy["type_"]
        meta["strategy"] = dict(strategy)
        cap = strategy.get("max_concurrency")
        if kind == "synchronous":
            row[Col.CONC] = 1
        elif kind == "concurrent":
            row[Col.CONC] = self._positive_int(strategy.get("streams"), "strategy.streams")
        elif kind == "throughput":
            if cap is not None:
                row[Col.CONC] = self._positive_int(cap, "strategy.max_concurrency")
            else:
                row[Col.REQUEST_RATE] = float("inf")  # every request at once
        elif kind in ("constant", "poisson"):
            rate = self.num(strategy.get("rate"), "strategy.rate")
            if rate <= 0:
                raise self.error("strategy.rate", f"expected a positive request rate, got {rate}")
            row[Col.REQUEST_RATE] = rate
            if cap is not None:
                meta["concurrency_cap"] = cap
        else:
            raise self.error(
                "strategy.type_",
                f"GuideLLM strategy {kind!r} has no load coordinate (expected synchronous, "
                "concurrent, throughput, constant or poisson)",
            )

    def _positive_int(self, value: Any, field: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise self.error(field, f"expected a positive integer, got {value!r}")
        return value

    def stat(self, metrics: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
        dist = _get(metrics, name, "successful")
        return dist if isinstance(dist, Mapping) and dist.get("count") else None

    def totals(self, metrics: Mapping[str, Any]) -> Mapping[str, Any]:
        totals = metrics.get("request_totals", self.entry.get("request_totals"))
        if not isinstance(totals, Mapping):
            raise self.error("metrics.request_totals", "GuideLLM benchmark without request totals")
        return totals

    def duration(self) -> float | None:
        if self.entry.get("duration") is not None:
            return self.num(self.entry["duration"], "duration")
        window = self.entry.get("scheduler_metrics")
        start, end = _get(window, "measure_start_time"), _get(window, "measure_end_time")
        if start is None or end is None:
            return None
        seconds = self.num(end, "scheduler_metrics.measure_end_time") - self.num(
            start, "scheduler_metrics.measure_start_time"
        )
        return seconds if seconds > 0 else None


def _latencies(b: _Bench, metrics: Mapping[str, Any], row: Row) -> None:
    for name, cols, scale in _LATENCIES:
        stat = b.stat(metrics, name)
        if stat is None:
            continue
        pct = stat.get("percentiles") if isinstance(stat.get("percentiles"), Mapping) else {}
        assert isinstance(pct, Mapping)
        values = {"mean": stat.get("mean"), "median": stat.get("median", pct.get("p50"))}
        values.update({ours: pct.get(theirs) for ours, theirs in _PERCENTILES})
        for ours, value in values.items():
            if value is None:
                continue
            seconds = b.num(value, f"metrics.{name}.successful.{ours}") * scale
            for col in cols:
                row[f"{ours}_{col}"] = seconds


def _nominal_lengths(data: Any) -> tuple[int | None, int | None]:
    """ISL / OSL of GuideLLM's synthetic data spec, in any of the forms reports hold it."""
    if isinstance(data, list) and data:
        data = data[0]
    if isinstance(data, str):
        found = dict(_SYNTH.findall(data))
        if not found:
            text = data.strip().strip("[]").strip("'\"")
            try:
                data = json.loads(text)
            except ValueError:
                return None, None
        else:
            return _int_or_none(found.get("prompt_tokens")), _int_or_none(
                found.get("output_tokens")
            )
    if isinstance(data, Mapping):
        if (_int_or_none(data.get("turns")) or 1) > 1:
            return None, None  # multi-turn conversations: no single nominal length
        return _int_or_none(data.get("prompt_tokens")), _int_or_none(data.get("output_tokens"))
    return None, None


def _int_or_none(value: Any) -> int | None:
    try:
        out = int(value)
    except (TypeError, ValueError):
        return None
    return out if out > 0 else None


def _model(doc: Mapping[str, Any], entry: Mapping[str, Any]) -> str | None:
    for candidate in (
        _get(entry, "config", "backend", "model"),
        _get(entry, "worker", "backend_model"),
        _get(doc, "args", "model"),
        _get(doc, "config", "spec", "backend", "model"),
    ):
        if isinstance(candidate, str) and candidate:
            return candidate
    return None


def _version(doc: Mapping[str, Any]) -> tuple[str, str]:
    """(GuideLLM version, report schema) as the report says them, or as its shape implies."""
    meta = doc.get("metadata")
    if isinstance(meta, Mapping) and isinstance(meta.get("guidellm_version"), str):
        return meta["guidellm_version"], f"metadata.version {meta.get('version')}"
    return "0.2-0.3", "0.2-0.3 (no metadata; version inferred from the report shape)"


def _point(doc: Mapping[str, Any], b: _Bench) -> Row:
    version, schema = _version(doc)
    meta: dict[str, Any] = {"tool": TOOL, "tool_version": version, "report_schema": schema}
    row: Row = {Col.SCHEMA_VARIANT: TOOL, Col.SCENARIO: "fixed-seq-len"}
    metrics = b.entry.get("metrics")
    if not isinstance(metrics, Mapping) or not metrics:
        raise b.error("metrics", "GuideLLM report without request statistics (no `metrics`)")
    b.load(row, meta)
    if (model := _model(doc, b.entry)) is not None:
        row[Col.MODEL] = model
    totals = b.totals(metrics)
    ok = int(b.num(totals.get("successful", 0), "request_totals.successful"))
    errored = int(b.num(totals.get("errored", 0), "request_totals.errored"))
    incomplete = int(b.num(totals.get("incomplete", 0), "request_totals.incomplete"))
    if ok <= 0:
        raise b.error(
            "metrics.request_totals.successful",
            f"GuideLLM benchmark with no successful requests ({errored} errored, "
            f"{incomplete} incomplete)",
        )
    row[Col.NUM_REQUESTS_SUCCESSFUL] = ok
    row[Col.NUM_REQUESTS_TOTAL] = ok + errored
    meta["incomplete_requests"] = incomplete
    _latencies(b, metrics, row)
    _throughputs(b, metrics, row, meta)
    data = (
        _get(b.entry, "request_loader", "data")
        or _get(doc, "args", "data")
        or _get(b.entry, "config", "requests", "data")
        or _get(doc, "config", "spec", "data")
    )
    isl, osl = _nominal_lengths(data)
    if isl is not None and osl is not None:
        row[Col.ISL], row[Col.OSL] = isl, osl
    for key in ("id_", "run_id", "run_index"):
        value = b.entry.get(key, _get(b.entry, "config", key))
        if value is not None:
            meta[key.rstrip("_")] = value
    profile = (
        _get(b.entry, "config", "profile", "type_")
        or _get(b.entry, "config", "profile", "kind")
        or _get(b.entry, "args", "profile", "type_")
    )
    if isinstance(profile, str):
        meta["profile"] = profile
    row[Col.METADATA] = meta
    return row


def _throughputs(b: _Bench, metrics: Mapping[str, Any], row: Row, meta: dict[str, Any]) -> None:
    for col, name in (
        (Col.MEAN_INPUT_LEN, "prompt_token_count"),
        (Col.MEAN_OUTPUT_LEN, "output_token_count"),
    ):
        stat = b.stat(metrics, name)
        if stat is not None and stat.get("mean") is not None:
            row[col] = b.num(stat["mean"], f"metrics.{name}.successful.mean")
    sums: dict[str, float] = {}
    for name in ("prompt_token_count", "output_token_count"):
        stat = b.stat(metrics, name)
        if stat is not None and stat.get("total_sum") is not None:
            sums[name] = b.num(stat["total_sum"], f"metrics.{name}.successful.total_sum")
    if "prompt_token_count" in sums:
        row[Col.TOTAL_INPUT_TOKENS] = int(sums["prompt_token_count"])
    if "output_token_count" in sums:
        row[Col.TOTAL_OUTPUT_TOKENS] = int(sums["output_token_count"])
    duration = b.duration()
    if duration is not None:
        row[Col.DURATION] = duration
        row[Col.REQUEST_THROUGHPUT] = row[Col.NUM_REQUESTS_SUCCESSFUL] / duration
        if "output_token_count" in sums:
            row[Col.OUTPUT_TPUT] = sums["output_token_count"] / duration
        if "prompt_token_count" in sums:
            row[Col.INPUT_TPUT] = sums["prompt_token_count"] / duration
    for name in (
        "output_tokens_per_second",
        "tokens_per_second",
        "prompt_tokens_per_second",
        "requests_per_second",
        "time_per_output_token_ms",
    ):
        stat = b.stat(metrics, name)
        if stat is not None and stat.get("mean") is not None:
            meta[f"guidellm_{name}_mean"] = b.num(stat["mean"], f"metrics.{name}.successful.mean")
    if duration is None:
        # No measured window: GuideLLM's own rates are all the report has.
        for col, name in (
            (Col.OUTPUT_TPUT, "output_tokens_per_second"),
            (Col.REQUEST_THROUGHPUT, "requests_per_second"),
        ):
            if (value := meta.get(f"guidellm_{name}_mean")) is not None:
                row[col] = value


def _companion(src: SourceFile) -> str | None:
    """'HTML' or 'CSV' for the other outputs GuideLLM writes beside its report, else None."""
    name = src.name.lower()
    if name.endswith(".html") and src.data.find(b"window.benchmarks = ") >= 0:
        return "HTML" if src.data.find(b"window.runInfo = ") >= 0 else None
    if name.endswith(".csv") and src.data.startswith(b"Run Info,Run Info,"):
        return "CSV"  # 0.4+: a header row of groups, then names, then units
    return None


class GuideLLMReader:
    """A GuideLLM report (JSON or YAML): one point per benchmark."""

    name = TOOL

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        if doc is not None:
            return is_report(doc)
        # GuideLLM 0.4+ writes YAML with yaml.dump's sorted keys: `metadata` and each benchmark's
        # `type_` come last, so the markers are looked for in the whole file.
        return _companion(src) is not None or (
            src.name.lower().endswith(_YAML_NAMES)
            and (
                src.data.find(b"guidellm_version:") >= 0
                or src.data.find(b"type_: generative_benchmark") >= 0
            )
            and _YAML_TOP.search(src.data) is not None
        )

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        if doc is None and (kind := _companion(src)) is not None:
            return ReadResult(
                notes=[
                    f"GuideLLM {kind} report: the same benchmarks as its JSON/YAML report, which "
                    "is what paretolens reads (`guidellm benchmark --outputs json`)"
                ]
            )
        if doc is None:
            doc = _yaml_doc(src)
            if not is_report(doc):
                raise ParseError(
                    src.rel,
                    "benchmarks",
                    "GuideLLM YAML report without a `benchmarks` list of generative benchmarks",
                )
        benchmarks = doc["benchmarks"]
        if benchmarks and _is_v01(doc):
            raise ParseError(
                src.rel,
                "benchmarks",
                "GuideLLM 0.1 report (per-request results, no statistics): not read; run "
                "GuideLLM 0.2 or later, whose reports carry the request statistics",
            )
        if not benchmarks:
            raise ParseError(
                src.rel,
                "benchmarks",
                "GuideLLM report without request statistics: `benchmarks` is empty (the run "
                "stopped before its first benchmark finished)",
            )
        points: list[Row] = []
        rejects: list[RowReject] = []
        for i, entry in enumerate(benchmarks):
            if not isinstance(entry, Mapping):
                rejects.append(RowReject(f"benchmarks[{i}]", "expected a benchmark object", str(i)))
                continue
            try:
                points.append(_point(doc, _Bench(src.rel, i, entry)))
            except ParseError as exc:
                rejects.append(RowReject(exc.field, exc.reason, f"benchmarks[{i}]"))
        if not points and all("without request statistics" in r.reason for r in rejects):
            raise ParseError(
                src.rel, "benchmarks", "GuideLLM report without request statistics in any benchmark"
            )
        return ReadResult(points=points, rejects=rejects)


FILE_READERS = (GuideLLMReader(),)
