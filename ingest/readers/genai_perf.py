"""GenAI-Perf run aggregates: `<prefix>_genai_perf.json` (and its `_genai_perf.csv` twin).

GenAI-Perf (triton-inference-server/perf_analyzer, `genai-perf/`) writes one top-level object per
metric (`{"unit": "ms", "avg": ..., "p50": ...}`) plus `input_config`, the shape aiperf later
copied. Up to 0.0.12 `input_config` is the argparse namespace (`model`, `concurrency`,
`request_rate`, `synthetic_input_tokens_mean`, `output_tokens_mean`); from 0.0.13 it is the config
object (`model_names`, `perf_analyzer.stimulus: {concurrency: N} | {request_rate: R}`,
`input.synthetic_tokens.mean`, `input.output_tokens.mean`). The first exports (May 2024) wrote
latencies in ns (`"unit": "ns"`) and named the lengths `num_input_token` / `num_output_token`;
later ones write ms. Every unit is read from the file. GenAI-Perf's ITL is per request
(e2e - ttft) / (osl - 1), so it is the schema's TPOT, as for aiperf (docs/formats.d/genai_perf.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._aiperf_export import Stat, is_genai_perf_export, metrics_row
from ingest.readers._metrics_common import number
from ingest.readers.base import ReadResult, Row, SourceFile

_RENAMED = {
    "num_input_token": "input_sequence_length",
    "num_output_token": "output_sequence_length",
}
_SKIP = {"input_config", "sessions"}


def _load(src: SourceFile) -> Any:
    if not src.name.endswith(".json") or src.data.lstrip()[:1] != b"{":
        return None
    try:
        return json.loads(src.text())
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise ParseError(src.rel, "", f"invalid JSON: {exc}") from exc


def stats_of(doc: Mapping[str, Any], rel: str) -> dict[str, Stat]:
    """One `Stat` per metric; telemetry entries (`{"unit", "gpu0": {...}}`) are left out.

    Raises:
        ParseError: when a statistic is not a finite number.
    """
    out: dict[str, Stat] = {}
    for key, entry in doc.items():
        if key in _SKIP or not isinstance(entry, Mapping) or "unit" not in entry:
            continue
        if any(isinstance(v, Mapping) for v in entry.values()):
            continue  # per-GPU telemetry
        values = {
            k: number(v, rel, f"{key}.{k}")
            for k, v in entry.items()
            if k != "unit" and v is not None
        }
        out[_RENAMED.get(str(key), str(key))] = Stat(str(entry["unit"]), values)
    return out


def _positive(value: Any, rel: str, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ParseError(rel, field, f"expected a positive number, got {value!r}")
    return float(value)


def _config_columns(config: Mapping[str, Any], rel: str) -> Row:
    """Model, load and nominal lengths from either `input_config` generation."""
    row: Row = {}
    names = config.get("model_names", config.get("model"))
    if isinstance(names, str):
        names = [names]
    if isinstance(names, list) and names:
        row[Col.MODEL] = str(names[0])
    pa = config.get("perf_analyzer")
    stimulus = pa.get("stimulus") if isinstance(pa, Mapping) else None
    where = (
        "input_config.perf_analyzer.stimulus" if isinstance(stimulus, Mapping) else "input_config"
    )
    load = stimulus if isinstance(stimulus, Mapping) else config
    rate = _positive(load.get("request_rate"), rel, f"{where}.request_rate")
    conc = _positive(load.get("concurrency"), rel, f"{where}.concurrency")
    if rate is not None:
        row[Col.REQUEST_RATE] = rate
    elif conc is not None:
        if conc != int(conc):
            raise ParseError(rel, f"{where}.concurrency", f"expected an integer, got {conc}")
        row[Col.CONC] = int(conc)
    inputs = config.get("input") if isinstance(config.get("input"), Mapping) else {}
    assert isinstance(inputs, Mapping)
    synth = inputs.get("synthetic_tokens")
    out_tok = inputs.get("output_tokens")
    isl = (
        synth.get("mean")
        if isinstance(synth, Mapping)
        else config.get("synthetic_input_tokens_mean")
    )
    osl = out_tok.get("mean") if isinstance(out_tok, Mapping) else config.get("output_tokens_mean")
    source = inputs.get("prompt_source", "synthetic" if "synthetic_tokens" in inputs else None)
    from_file = bool(config.get("input_file") or config.get("input_dataset") or inputs.get("file"))
    synthetic = source in (None, "synthetic") and not from_file
    row[Col.SCENARIO] = "fixed-seq-len"
    for col, value in ((Col.ISL, isl), (Col.OSL, osl)):
        # -1 / 0 mean "not set" (the server picks the length); a file's prompts have no nominal ISL
        if (
            synthetic
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            and value > 0
        ):
            row[col] = int(value)
    return row


def _metadata(config: Mapping[str, Any], stats: Mapping[str, Stat]) -> dict[str, Any]:
    meta: dict[str, Any] = {"tool": "genai-perf"}
    endpoint = config.get("endpoint") if isinstance(config.get("endpoint"), Mapping) else {}
    assert isinstance(endpoint, Mapping)
    for ours, keys in (
        ("service_kind", ("service_kind",)),
        ("endpoint_type", ("endpoint_type", "type")),
        ("backend", ("backend",)),
        ("streaming", ("streaming",)),
        ("url", ("u", "url")),
    ):
        for key in keys:
            value = endpoint.get(key, config.get(key))
            if value is not None and not isinstance(value, Mapping | list):
                meta[ours] = value
                break
    pa = config.get("perf_analyzer")
    stimulus = pa.get("stimulus") if isinstance(pa, Mapping) else None
    if isinstance(stimulus, Mapping):
        meta["stimulus"] = dict(stimulus)
    for name in ("output_token_throughput_per_user", "output_token_throughput_per_request"):
        if name in stats and "avg" in stats[name].values:
            meta[f"{name}_avg"] = stats[name].values["avg"]
    return meta


def read_export(doc: Mapping[str, Any], rel: str) -> Row:
    """One canonical point from a GenAI-Perf JSON export.

    Raises:
        ParseError: when a metric, unit or load field cannot be read.
    """
    stats = stats_of(doc, rel)
    point = _config_columns(doc["input_config"], rel)
    point.update(metrics_row(stats, rel))
    # GenAI-Perf writes no duration, totals or input/total throughput; request throughput x mean
    # ISL is the input tokens per second of the same requests.
    req, isl = point.get(Col.REQUEST_THROUGHPUT), point.get(Col.MEAN_INPUT_LEN)
    if point.get(Col.INPUT_TPUT) is None and req is not None and isl is not None:
        point[Col.INPUT_TPUT] = req * isl
    if point.get(Col.TOTAL_TPUT) is None and point.get(Col.INPUT_TPUT) is not None:
        out = point.get(Col.OUTPUT_TPUT)
        if out is not None:
            point[Col.TOTAL_TPUT] = point[Col.INPUT_TPUT] + out
    point[Col.METADATA] = _metadata(doc["input_config"], stats)
    point[Col.SCHEMA_VARIANT] = "genai_perf"
    return point


class GenaiPerfReader:
    """A directory holding a GenAI-Perf `*_genai_perf.json` (its CSV twin is claimed with it)."""

    name = "genai_perf"

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        for src in files:
            if src.name.endswith("_genai_perf.json") or (
                src.name.endswith(".json") and src.data.find(b'"input_config"') >= 0
            ):
                try:
                    if is_genai_perf_export(_load(src)):
                        return True
                except ParseError:
                    if src.name.endswith("_genai_perf.json"):
                        return True  # ours, and broken: read_unit reports why
        return False

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        found = [(f, d) for f in files if is_genai_perf_export(d := _load(f))]
        if not found:
            raise ParseError(files[0].rel, "", "no GenAI-Perf export (*_genai_perf.json) here")
        src, doc = found[0]
        point = read_export(doc, src.rel)
        stem = src.name.removesuffix(".json")
        twins = [f.rel for f in files if f.name == f"{stem}.csv"]
        notes = []
        if point.get(Col.TP) is None and point.get(Col.NUM_GPUS) is None:
            notes.append(
                f"{src.rel}: GenAI-Perf records no server topology, so the GPU count is unknown "
                "and per-GPU throughput is not computed"
            )
        return ReadResult(points=[point], consumed=[src.rel, *twins], notes=notes)


UNIT_READERS = (GenaiPerfReader(),)
