"""Reader for sgl-project genai-bench experiment folders (`genai-bench benchmark`, 0.0.x).

A folder holds `experiment_metadata.json` (the command line, `benchmark_version`, `api_backend`,
`api_model_name`, `model`, `task`, `iteration_type` (`num_concurrency` or `batch_size`),
`num_concurrency`, `traffic_scenario`, `server_engine`, `server_version`, `server_gpu_type`,
`server_gpu_count`, `metrics_time_unit` (2025+)) and one run file per (traffic scenario,
concurrency): `<scenario>_<task>_[<backend>_<model>_]num_concurrency_<N>_time_<T>s.json` (older
releases: `..._concurrency_<N>_...`) with `aggregated_metrics` (`scenario`, `num_concurrency`,
`run_duration`, `mean_{output,input,total_tokens}_throughput_tokens_per_s` (server totals over
the run), `requests_per_second` (2024: `requests_per_minute`), `num_requests`,
`num_completed_requests`, `num_error_requests`, `error_codes_frequency`, `stats{ttft, tpot,
e2e_latency, output_latency, num_input_tokens, num_output_tokens, ...}` each with
`min/max/mean/stddev/sum/p25/p50/p75/p90/p95/p99`) and `individual_request_metrics` (per request,
not needed: the aggregate has every statistic). Each run file is one point; the Excel summary
and the plots genai-bench writes beside them are joined as auxiliary files.

Quirks: latencies are in seconds unless the run file's `_time_unit` (2025+) or the metadata's
`metrics_time_unit` says `ms`. `error_rate` is written as 0 even when requests failed, so the
request counts are used. With `--disable-streaming` every TTFT is a 1 ms placeholder: TTFT is not
stored and TPOT (which then includes the prefill) is kept with a warning. `isl`/`osl` come from the
traffic scenario: `D(in,out)` is exact, `N(in_mean,in_std)/(out_mean,out_std)` and
`U(...)` give the means (a warning says so). The metadata command line can hold an API key, so
it is never copied; the harness and its version go to `metadata` (`harness`, `harness_version`).
Embedding and re-rank runs (`iteration_type: batch_size`) are refused by name.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._common import Fields, put, warn
from ingest.readers.base import ReadResult, Row, RowReject, SourceFile

HARNESS = "genai-bench"
_METADATA = "experiment_metadata.json"
_RUN = re.compile(r"^.+_(?:num_concurrency|concurrency|batch_size)_(?P<n>\d+)_time_\d+s\.json$")
# What genai-bench writes beside the run files: the Excel summary and the plots.
_SIDE_FILES = re.compile(r"(?:_summary\.xlsx|^(?:interim_|traffic_scenario_).+\.png)$")
_SCENARIO = re.compile(
    r"^(?P<kind>[DNU])\((?P<a>\d+(?:\.\d+)?),(?P<b>\d+(?:\.\d+)?)\)"
    r"(?:/\((?P<c>\d+(?:\.\d+)?),(?P<d>\d+(?:\.\d+)?)\))?$"
)
_STATS = {"p50": "median", "p90": "p90", "p95": "p95", "p99": "p99", "mean": "mean"}
_LATENCIES = {"ttft": "ttft", "tpot": "tpot", "e2e_latency": "e2el"}
_ENGINES = {"sglang": "sglang", "vllm": "vllm", "trt-llm": "trt", "tensorrt-llm": "trt"}
_SERVING_TASKS = ("text-to-text", "image-text-to-text", "chat")


def _load(src: SourceFile) -> Any:
    try:
        return json.loads(src.text())
    except (ValueError, RecursionError) as exc:
        raise ParseError(src.rel, "", f"{HARNESS} file is not valid JSON: {exc}") from exc


def _is_metadata(src: SourceFile) -> bool:
    return (
        src.name == _METADATA
        and b'"traffic_scenario"' in src.data
        and b'"iteration_type"' in src.data
    )


def _is_run(src: SourceFile) -> bool:
    return _RUN.match(src.name) is not None and b'"aggregated_metrics"' in src.data[:4096]


def _lengths(scenario: str | None, row: Row) -> None:
    m = _SCENARIO.match((scenario or "").replace(" ", ""))
    if not m:
        return
    if m["kind"] == "D":
        isl, osl = float(m["a"]), float(m["b"])
    elif m["c"] is not None:  # N(in_mean,in_std)/(out_mean,out_std), U(in_min,in_max)/(...)
        isl, osl = float(m["a"]), float(m["c"])
        if m["kind"] == "U":
            isl, osl = (float(m["a"]) + float(m["b"])) / 2, (float(m["c"]) + float(m["d"])) / 2
        warn(row, f"isl/osl are the means of traffic scenario {scenario}, not fixed lengths")
    else:
        return
    put(row, Col.ISL, int(isl))
    put(row, Col.OSL, int(osl))


def _identity(meta: Fields | None, row: Row, info: dict[str, Any]) -> None:
    if meta is None:
        return
    put(row, Col.MODEL, meta.str_("api_model_name") or meta.str_("model"))
    engine = (meta.str_("server_engine") or meta.str_("server_version") or "").lower()
    put(row, Col.FRAMEWORK, _ENGINES.get(engine, engine or None))
    if meta.str_("server_version") and meta.str_("server_engine"):
        info["server_version"] = meta.str_("server_version")
    put(row, Col.HW_LABEL, meta.str_("server_gpu_type"))
    count = meta.obj.get("server_gpu_count")
    if isinstance(count, str) and count.isdigit() and int(count) > 0:
        put(row, Col.NUM_GPUS, int(count))
    elif count is not None and not isinstance(count, str):
        put(row, Col.NUM_GPUS, meta.pos_int("server_gpu_count"))
    for key in ("api_backend", "task", "model", "server_model_tokenizer"):
        value = meta.obj.get(key)
        if isinstance(value, str) and value:
            info[key] = value


def _run_row(src: SourceFile, doc: Any, meta: Fields | None, streaming: bool) -> Row:
    f = Fields.top(src, doc, "a genai-bench run file")
    agg = f.sub("aggregated_metrics", required=True)
    assert agg is not None
    unit = doc.get("_time_unit") or (meta.str_("metrics_time_unit") if meta else None) or "s"
    if unit not in ("s", "ms"):
        raise f.error("_time_unit", f"expected 's' or 'ms', got {unit!r}")
    scale = 1.0 if unit == "s" else 1e-3
    version = meta.str_("benchmark_version") if meta else None
    info: dict[str, Any] = {"harness": HARNESS, "harness_version": version or None}
    row: Row = {Col.SCHEMA_VARIANT.value: "genai_bench"}
    _identity(meta, row, info)
    if agg.str_("iteration_type") == "batch_size" or (
        info.get("task") and info["task"] not in _SERVING_TASKS
    ):
        raise ParseError(
            src.rel,
            "iteration_type",
            f"{HARNESS} {version or ''} {info.get('task', 'batch_size')} run: not an LLM-serving "
            "sweep (embedding and re-rank runs iterate over batch sizes, with no token latencies)",
        )
    put(row, Col.CONC, agg.pos_int("num_concurrency", required=True))
    scenario = agg.str_("scenario")
    info["traffic_scenario"] = scenario
    _lengths(scenario, row)
    total = agg.int_("num_requests")
    ok = agg.int_("num_completed_requests")
    if ok is not None and ok <= 0:
        codes = agg.obj.get("error_codes_frequency") or {}
        raise ParseError(
            src.rel,
            "aggregated_metrics.num_completed_requests",
            f"{HARNESS} {version or ''} run: all {total} requests failed "
            f"(HTTP {', '.join(map(str, codes)) or 'errors'}); no point",
        )
    put(row, Col.NUM_REQUESTS_SUCCESSFUL, ok)
    put(row, Col.NUM_REQUESTS_TOTAL, total)
    if agg.obj.get("error_codes_frequency"):
        info["error_codes_frequency"] = agg.obj["error_codes_frequency"]
    put(row, Col.DURATION, agg.num("run_duration"))
    put(row, Col.OUTPUT_TPUT, agg.num("mean_output_throughput_tokens_per_s", required=True))
    put(row, Col.INPUT_TPUT, agg.num("mean_input_throughput_tokens_per_s"))
    put(row, Col.TOTAL_TPUT, agg.num("mean_total_tokens_throughput_tokens_per_s"))
    rps = agg.num("requests_per_second")
    if rps is None and (rpm := agg.num("requests_per_minute")) is not None:
        rps = rpm / 60.0
    put(row, Col.REQUEST_THROUGHPUT, rps)
    stats = agg.sub("stats", required=True)
    assert stats is not None
    for key, lat in _LATENCIES.items():
        stat = stats.sub(key)
        if stat is None or (lat == "ttft" and not streaming):
            continue
        for name, col in _STATS.items():
            value = stat.num(name)
            if value is not None:
                row[f"{col}_{lat}"] = value * scale
    if not streaming:
        warn(
            row,
            "run with --disable-streaming: TTFT not measured (genai-bench writes a 1 ms "
            "placeholder) and TPOT includes the prefill",
        )
    for key, col in (
        ("num_input_tokens", Col.MEAN_INPUT_LEN),
        ("num_output_tokens", Col.MEAN_OUTPUT_LEN),
    ):
        stat = stats.sub(key)
        if stat is not None:
            put(row, col, stat.num("mean"))
    put(row, Col.METADATA, {k: v for k, v in info.items() if v is not None})
    return row


class GenaiBenchReader:
    """A genai-bench experiment folder: one point per run file."""

    name = "genai_bench"

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        return any(_is_metadata(f) for f in files) or any(_is_run(f) for f in files)

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        meta_src = next((f for f in files if _is_metadata(f)), None)
        meta = None
        notes: list[str] = []
        if meta_src is not None:
            meta_doc = _load(meta_src)
            meta = Fields.top(meta_src, meta_doc, "genai-bench experiment_metadata.json")
        runs = sorted((f for f in files if _is_run(f)), key=lambda f: f.rel)
        folder = str(PurePosixPath(files[0].rel).parent)
        if not runs:
            raise ParseError(
                meta_src.rel if meta_src else files[0].rel,
                "",
                f"{HARNESS} experiment folder without a run file "
                "(`<scenario>_<task>_num_concurrency_<N>_time_<T>s.json`): the runs did not finish",
            )
        if meta is None:
            notes.append(
                f"{folder}: no {_METADATA} beside the genai-bench run files: model, engine, GPUs "
                "and harness version unknown"
            )
        cmd = meta.str_("cmd") if meta else None
        streaming = not (cmd and re.search(r"--disable-streaming(?:[ =](?:True|true|1))?\b", cmd))
        points: list[Row] = []
        failed: list[tuple[SourceFile, ParseError]] = []
        for src in runs:
            try:
                points.append(_run_row(src, _load(src), meta, streaming))
            except ParseError as exc:
                failed.append((src, exc))
        meta_rels = [meta_src.rel] if meta_src else []
        # genai-bench's own summary workbook and plots travel with the runs: joined, not refused.
        meta_rels += sorted(f.rel for f in files if meta_src and _SIDE_FILES.search(f.name))
        if points:
            # The first consumed file names the points' source: the experiment's metadata.
            consumed = [*meta_rels, *(s.rel for s in runs)]
        else:  # every run refused: the first run file is where the refusals are reported
            consumed = [*(s.rel for s in runs), *meta_rels]
        anchor = consumed[0]
        rejects = [
            RowReject(exc.field, exc.reason, "" if src.rel == anchor else src.name)
            for src, exc in failed
        ]
        return ReadResult(points=points, rejects=rejects, notes=notes, consumed=consumed)


UNIT_READERS = (GenaiBenchReader(),)
