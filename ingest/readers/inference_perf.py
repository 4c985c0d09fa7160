"""kubernetes-sigs inference-perf request-lifecycle reports (`reports-<date>/stage_N_lifecycle_metrics.json`).

Source: kubernetes-sigs/inference-perf, `inference_perf/reportgen/base.py`. A run sweeps load
stages (`load.stages[]` or `load.sweep`); with `report.request_lifecycle.per_stage` it writes one
`stage_N_lifecycle_metrics.json` per stage (each one point here), a
`summary_lifecycle_metrics.json` over all stages (mixing every load: not a point), optional
`per_request_lifecycle_metrics.json` and `*_prometheus_metrics.json` (server-side, not read), and
the run's `config.yaml`, which names the model (`server.model_name`, else the tokenizer).

Each report is `{load_summary, successes, failures}`; `successes.latency.<metric>` are
distributions in seconds and `successes.throughput` per-second totals. The reports carry no
version; the shape dates them:

- 0.1.x (Jun-Aug 2025): `load_summary` is `{count}` only, distributions are
  `{mean, min, p10, p50, p90, max}`; the stage's rate comes from `config.yaml`'s `load.stages[N]`.
- 0.2 onward (Sep 2025): `load_summary.requested_rate` / `achieved_rate` / `send_duration` /
  `schedule_delay`; distributions add p0.1 .. p99.9 and name the median `median`.
- 0.3 onward: `load_summary.concurrency` for concurrency-driven stages.
- 0.5 onward: `successes.goodput_metrics` when SLOs are configured; 0.6.1: `failures.by_label`.

Quirks: `time_per_output_token` is per request (last token - first token) / (tokens - 1), the
schema's TPOT; `inter_token_latency` is the distribution of every gap between streamed chunks
(the schema's ITL); `normalized_time_per_output_token` is request latency / output tokens, whose
inverse is InferenceX's E2E-normalised interactivity (median = 1 / its median, p90 = 1 / its p90).
Non-streamed runs have no TTFT, TPOT or ITL (`null`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._metrics_common import number
from ingest.readers.base import ReadResult, Row, RowReject, SourceFile
from ingest.untrusted.yaml_load import load_yaml

TOOL = "inference-perf"
_STAGE = re.compile(r"^stage_(\d+)_lifecycle_metrics\.json$")
_NOT_READ = re.compile(
    r"^(per_request_lifecycle_metrics|(stage_\d+|summary)_prometheus_metrics)\.json$"
)
_LATENCIES = (
    ("time_to_first_token", "ttft"),
    ("time_per_output_token", "tpot"),
    ("inter_token_latency", "itl"),
    ("request_latency", "e2el"),
)
_STATS = (
    ("mean", ("mean",)),
    ("median", ("median", "p50")),
    ("p75", ("p75",)),
    ("p90", ("p90",)),
    ("p95", ("p95",)),
    ("p99", ("p99",)),
    ("p99.9", ("p99.9",)),
)


def is_lifecycle_report(doc: Any) -> bool:
    """True for an inference-perf request-lifecycle report (stage or summary)."""
    return (
        isinstance(doc, Mapping)
        and isinstance(doc.get("load_summary"), Mapping)
        and isinstance(doc.get("successes"), Mapping)
        and "failures" in doc
    )


def _load(src: SourceFile) -> Any:
    if not src.name.endswith(".json") or src.data.lstrip()[:1] != b"{":
        return None
    try:
        return json.loads(src.text())
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise ParseError(src.rel, "", f"inference-perf report is not valid JSON: {exc}") from exc


def _config(files: list[SourceFile]) -> tuple[SourceFile | None, Mapping[str, Any]]:
    import yaml

    for src in files:
        if src.name not in ("config.yaml", "config.yml"):
            continue
        try:
            doc = load_yaml(src.text())
        except yaml.YAMLError as exc:
            raise ParseError(
                src.rel, "", f"inference-perf config.yaml is not valid YAML: {exc}"
            ) from exc
        if isinstance(doc, Mapping) and ("load" in doc or "server" in doc):
            return src, doc
    return None, {}


def _model(config: Mapping[str, Any]) -> str | None:
    server, tok = config.get("server"), config.get("tokenizer")
    for value in (
        server.get("model_name") if isinstance(server, Mapping) else None,
        tok.get("pretrained_model_name_or_path") if isinstance(tok, Mapping) else None,
    ):
        if isinstance(value, str) and value:
            return value
    return None


def _version(doc: Mapping[str, Any]) -> str:
    load, successes = doc["load_summary"], doc["successes"]
    if "goodput_metrics" in successes:
        return "0.5+"
    if "concurrency" in load:
        return "0.3+"
    if "requested_rate" in load or "schedule_delay" in load:
        return "0.2+"
    return "0.1"


class _Report:
    def __init__(self, src: SourceFile, doc: Mapping[str, Any]) -> None:
        self.src, self.doc = src, doc

    def num(self, value: Any, field: str) -> float:
        return number(value, self.src.rel, field)

    def error(self, field: str, reason: str) -> ParseError:
        return ParseError(self.src.rel, field, reason)


def _stage_rate(config: Mapping[str, Any], stage: int) -> Any:
    load = config.get("load")
    stages = load.get("stages") if isinstance(load, Mapping) else None
    if isinstance(stages, list) and 0 <= stage < len(stages) and isinstance(stages[stage], Mapping):
        return stages[stage].get("rate")
    return None


def _load_columns(
    r: _Report, stage: int, config: Mapping[str, Any], row: Row, meta: dict[str, Any]
) -> None:
    load = r.doc["load_summary"]
    for key in ("requested_rate", "achieved_rate", "send_duration", "concurrency"):
        if load.get(key) is not None:
            meta[key] = load[key]
    conc = load.get("concurrency")
    if conc is not None:
        if isinstance(conc, bool) or not isinstance(conc, int) or conc <= 0:
            raise r.error("load_summary.concurrency", f"expected a positive integer, got {conc!r}")
        row[Col.CONC] = conc
        return
    rate = load.get("requested_rate")
    where = "load_summary.requested_rate"
    if rate is None:
        rate, where = _stage_rate(config, stage), f"config.yaml load.stages[{stage}].rate"
    if rate is None:
        raise r.error(
            "load_summary.requested_rate",
            f"inference-perf stage {stage} report without its load rate (inference-perf 0.1 "
            "writes it only in the run's config.yaml: put config.yaml beside the reports)",
        )
    value = r.num(rate, where)
    if value <= 0:
        raise r.error(where, f"expected a positive request rate, got {value}")
    row[Col.REQUEST_RATE] = value


def _metric_columns(r: _Report, row: Row) -> None:
    successes = r.doc["successes"]
    latency = successes.get("latency") if isinstance(successes.get("latency"), Mapping) else {}
    assert isinstance(latency, Mapping)
    for name, ours in _LATENCIES:
        dist = latency.get(name)
        if not isinstance(dist, Mapping):
            continue  # null when no request streamed
        for stat, keys in _STATS:
            key = next((k for k in keys if dist.get(k) is not None), None)
            if key is not None:
                row[f"{stat}_{ours}"] = r.num(dist[key], f"successes.latency.{name}.{key}")
    ntpot = latency.get("normalized_time_per_output_token")
    if isinstance(ntpot, Mapping):
        for col, keys in (
            (Col.MEDIAN_E2E_NORM_INTVTY, ("median", "p50")),
            (Col.P90_E2E_NORM_INTVTY, ("p90",)),
        ):
            key = next((k for k in keys if ntpot.get(k) is not None), None)
            if key is None:
                continue
            value = r.num(ntpot[key], f"successes.latency.normalized_time_per_output_token.{key}")
            if value > 0:
                row[col] = 1.0 / value
    tput = successes.get("throughput") if isinstance(successes.get("throughput"), Mapping) else {}
    assert isinstance(tput, Mapping)
    for col, key in (
        (Col.INPUT_TPUT, "input_tokens_per_sec"),
        (Col.OUTPUT_TPUT, "output_tokens_per_sec"),
        (Col.TOTAL_TPUT, "total_tokens_per_sec"),
        (Col.REQUEST_THROUGHPUT, "requests_per_sec"),
    ):
        if tput.get(key) is not None:
            row[col] = r.num(tput[key], f"successes.throughput.{key}")
    for col, key in ((Col.MEAN_INPUT_LEN, "prompt_len"), (Col.MEAN_OUTPUT_LEN, "output_len")):
        dist = successes.get(key)
        if isinstance(dist, Mapping) and dist.get("mean") is not None:
            row[col] = r.num(dist["mean"], f"successes.{key}.mean")


def _count(r: _Report, section: str) -> int:
    part = r.doc.get(section)
    value = part.get("count", 0) if isinstance(part, Mapping) else 0
    out = r.num(value, f"{section}.count")
    if out < 0 or out != int(out):
        raise r.error(f"{section}.count", f"expected a non-negative integer, got {value!r}")
    return int(out)


def _stage_point(r: _Report, stage: int, config: Mapping[str, Any]) -> Row:
    ok, failed = _count(r, "successes"), _count(r, "failures")
    if ok == 0:
        raise r.error(
            "successes.count",
            f"inference-perf stage {stage}: no successful requests ({failed} failed)",
        )
    meta: dict[str, Any] = {
        "tool": TOOL,
        "tool_version": _version(r.doc),
        "stage": stage,
        "stage_report": r.src.name,  # the unit's points are stored under its first stage file
    }
    row: Row = {Col.SCHEMA_VARIANT: "inference_perf", Col.SCENARIO: "fixed-seq-len"}
    _load_columns(r, stage, config, row, meta)
    if (model := _model(config)) is not None:
        row[Col.MODEL] = model
    row[Col.NUM_REQUESTS_SUCCESSFUL] = ok
    row[Col.NUM_REQUESTS_TOTAL] = ok + failed
    _metric_columns(r, row)
    for key, ours in (("api", "api_type"), ("data", "data_type"), ("load", "load_type")):
        section = config.get(key)
        if isinstance(section, Mapping) and isinstance(section.get("type"), str):
            meta[ours] = section["type"]
    row[Col.METADATA] = meta
    return row


def _has_load(doc: Mapping[str, Any]) -> bool:
    """A stage report says its load (0.2+); the all-stage summary does not."""
    load = doc["load_summary"]
    return "requested_rate" in load or "concurrency" in load


def _stage_index(src: SourceFile, position: int) -> int:
    # stage_N_lifecycle_metrics.json; a renamed stage report keeps its place in the directory.
    m = _STAGE.match(src.name)
    return int(m[1]) if m else position


class InferencePerfReader:
    """A directory of inference-perf reports: one point per `stage_N_lifecycle_metrics.json`."""

    name = "inference_perf"

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        for src in files:
            data = src.data
            if data.find(b'"load_summary"', 0, 256) >= 0 and data.find(b'"successes"') >= 0:
                try:
                    return is_lifecycle_report(_load(src))
                except ParseError:
                    return True  # ours, and broken: read_unit reports why
        return False

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        reports: list[tuple[SourceFile, Mapping[str, Any]]] = []
        for src in files:
            if src.data.find(b'"load_summary"', 0, 256) >= 0 and is_lifecycle_report(
                doc := _load(src)
            ):
                reports.append((src, doc))
        config_src, config = _config(files)
        staged = [(s, d) for s, d in reports if _STAGE.match(s.name) or _has_load(d)]
        stages = sorted(
            ((_stage_index(s, i), s, d) for i, (s, d) in enumerate(staged)),
            key=lambda t: (t[0], t[1].rel),
        )
        staged_rels = {s.rel for s, _ in staged}
        summaries = [s for s, _ in reports if s.rel not in staged_rels]
        if not stages:
            raise ParseError(
                (summaries or files)[0].rel,
                "load_summary",
                "inference-perf summary report without per-stage reports: the summary mixes every "
                "load stage and has no load rate of its own; ingest the run's "
                "stage_N_lifecycle_metrics.json files",
            )
        points: list[Row] = []
        rejects: list[RowReject] = []
        notes: list[str] = []
        for stage, src, doc in stages:
            try:
                points.append(_stage_point(_Report(src, doc), stage, config))
            except ParseError as exc:
                rejects.append(RowReject(exc.field, f"{src.rel}: {exc.reason}", f"stage {stage}"))
        unit = str(PurePosixPath(stages[0][1].rel).parent)
        if config_src is None:
            notes.append(
                f"{unit}: no inference-perf config.yaml beside the stage reports, so the model "
                "is unknown; copy the run's config.yaml into the report directory"
            )
        notes += [
            f"{s.rel}: inference-perf summary over all stages, not a point (each stage report is one)"
            for s in summaries
        ]
        skipped = [s.rel for s in files if _NOT_READ.match(s.name)]
        notes += [
            f"{rel}: inference-perf per-request or Prometheus report, not read" for rel in skipped
        ]
        # The first consumed file names the points' source; every stage file is one of them.
        consumed = [
            stages[0][1].rel,
            *[s.rel for _, s, _ in stages[1:]],
            *[s.rel for s in summaries],
            *skipped,
        ]
        if config_src is not None:
            consumed.append(config_src.rel)
        return ReadResult(points=points, rejects=rejects, notes=notes, consumed=consumed)


UNIT_READERS = (InferencePerfReader(),)
