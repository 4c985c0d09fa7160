"""Reader for NVIDIA TensorRT-LLM `trtllm-bench throughput|latency` reports.

Two shapes of the same report, both written by `tensorrt_llm/bench/dataclasses/reporting.py`:

- `--report_json FILE` (0.12 to today): `{engine{model, version, backend, dtype, quantization,
  kv_cache_dtype, ...}, machine{name, ...} (1.x), world_info{tp_size, pp_size, ep_size (0.17+),
  world_size, max_batch_size, max_num_tokens, issue_rate, ...}, request_info{num_requests,
  avg_num_concurrent_requests (0.17+), avg_input_length, avg_output_length},
  performance{total_latency_ms, avg_request_latency_ms, request_throughput_req_s,
  system_output_throughput_tok_s, system_total_throughput_tok_s (0.17+),
  output_throughput_per_user_tok_s, request_latency_percentiles_ms{p50, p90, p95, p99, ...}},
  streaming_metrics{avg_ttft_ms, avg_tpot_ms, ttft_percentiles, tpot_percentiles, ...} (only with
  `--streaming`), decoding_stats (speculative runs), dataset{isl_stats, osl_stats, ...}}`. Every
  time is in milliseconds.
- The console report printed at the end of a run (what a captured log holds): sections headed
  `= ENGINE DETAILS` or `= PYTORCH BACKEND`, `= WORLD + RUNTIME INFORMATION`, `= REQUEST DETAILS`
  (0.17+), `= PERFORMANCE OVERVIEW`, each a list of `Label:<tabs or spaces>value` lines, then
  `[TTFT] P50 : x` style breakdowns (0.17+, streaming). Up to 0.16 the overview has one
  `Token Throughput (tokens/sec)` line, which is the *output* token rate (requests/s x average
  output length); 0.17+ prints `Total Output Throughput` and `Total Token Throughput`.

Quirks: the report never records the `--concurrency` the run was started with, nor the JSON the
subcommand. The load coordinate is the `--concurrency N` of a `trtllm-bench` command line printed
(or pasted) before the console report; else `conc = 1` for a latency run (the log says
`Preparing to run latency benchmark`) or a runtime batch size of 1 (the engine holds one request
at a time); otherwise the run offered every request at once (`rate=-1`, the default) and the
point's load is `request_rate = inf`, with the measured mean in-flight count in `metadata` and a
warning (`--set conc=N` gives the real value). The command line also gives `--model`/`-m`, `--tp`,
`--pp`, `--ep` when the report lacks them (a pasted excerpt). A console report holds only average
input/output lengths: `isl`/`osl` are set from them when they are whole numbers, with a warning.
Section titles are matched in any case (`= PyTorch backend` in 0.17 docs). `framework` is `trt` (InferenceX's name); the harness and its version go
to `metadata` (`harness`, `harness_version`) and `schema_variant` (`trtllm_bench_json`,
`trtllm_bench_console`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._common import Fields, put, warn
from ingest.readers._metrics_common import parse_float
from ingest.readers.base import ReadResult, Row, SourceFile

HARNESS = "trtllm-bench"
_JSON_VARIANT = "trtllm_bench_json"
_CONSOLE_VARIANT = "trtllm_bench_console"
_OVERVIEW = b"= PERFORMANCE OVERVIEW"
_PREPARING = re.compile(rb"Preparing to run (throughput|latency) benchmark")
_VERSION_LINE = re.compile(r"\[TensorRT-LLM\] TensorRT-LLM version: (?P<v>\S+)")
_SECTION = re.compile(r"^= (?P<name>[A-Za-z][A-Za-z +]*?)\s*$")
_PREPARING_TEXT = re.compile(r"Preparing to run (throughput|latency) benchmark")
_FLAG = re.compile(r"(?:^|\s)--?(?P<key>[a-z][a-z0-9_-]*)(?:[ =](?P<value>[^\s\\-][^\s\\]*))?")
_LINE = re.compile(r"^(?P<label>[A-Za-z][^:]*?):\s+(?P<value>\S.*?)\s*$")
_BREAKDOWN = re.compile(
    r"^\[(?P<kind>TTFT|TPOT|GTPS|Latency)\]\s+(?P<stat>[A-Z0-9]+)\s*:\s*(?P<value>\S+)\s*$"
)
_BACKEND_SECTIONS = ("ENGINE DETAILS", "PYTORCH BACKEND")
_PCT = {"p50": "median", "p90": "p90", "p95": "p95", "p99": "p99"}


def _precision(quantization: str | None, dtype: str | None) -> str | None:
    """InferenceX's precision name: the quantization, else the weight dtype."""
    if quantization and quantization.lower() not in ("none", "no_quant"):
        q = quantization.lower()
        return "fp4" if q in ("nvfp4", "fp4", "mxfp4") else q
    if dtype:
        return {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(dtype.lower(), dtype)
    return None


def _load(row: Row, meta: dict[str, Any], *, latency: bool, batch: int | None) -> None:
    if latency or batch == 1:
        put(row, Col.CONC, 1)
        return
    put(row, Col.REQUEST_RATE, math.inf)
    measured = meta.get("avg_num_concurrent_requests")
    warn(
        row,
        "trtllm-bench does not record the client concurrency: every request was offered at once "
        f"(request_rate=inf); measured mean in flight {measured if measured is not None else 'not reported'}"
        "; give --set conc=N if the run used --concurrency N",
    )


# ---- --report_json -------------------------------------------------------------------------


def is_report_json(doc: Any) -> bool:
    """A `trtllm-bench --report_json` document."""
    if not isinstance(doc, dict):
        return False
    perf = doc.get("performance")
    return (
        isinstance(perf, dict)
        and ("request_throughput_req_s" in perf or "system_output_throughput_tok_s" in perf)
        and isinstance(doc.get("engine"), dict)
        and ("request_info" in doc or "world_info" in doc)
    )


def _percentiles(f: Fields | None, row: Row, lat: str) -> None:
    if f is None:
        return
    for key, stat in _PCT.items():
        value = f.num(key)
        if value is not None:
            row[f"{stat}_{lat}"] = value / 1000.0


def _json_row(src: SourceFile, doc: Any) -> Row:
    f = Fields.top(src, doc, "a trtllm-bench report")
    engine = f.sub("engine", required=True)
    assert engine is not None
    world = f.sub("world_info")
    requests = f.sub("request_info")
    perf = f.sub("performance", required=True)
    assert perf is not None
    version = engine.str_("version")
    meta: dict[str, Any] = {"harness": HARNESS, "harness_version": version}
    for key in ("backend", "kv_cache_dtype", "engine_dir", "model_path"):
        value = engine.obj.get(key)
        if isinstance(value, str) and value not in ("", "None"):
            meta[key] = value
    machine = f.sub("machine")
    if machine is not None and machine.str_("name"):
        meta["gpu_name"] = machine.str_("name")
    row: Row = {Col.SCHEMA_VARIANT.value: _JSON_VARIANT, Col.FRAMEWORK.value: "trt"}
    put(row, Col.MODEL, engine.str_("model", required=True))
    put(row, Col.PRECISION, _precision(engine.str_("quantization"), engine.str_("dtype")))
    batch = None
    if world is not None:
        put(row, Col.TP, world.pos_int("tp_size"))
        put(row, Col.PP, world.pos_int("pp_size"))
        put(row, Col.EP, world.pos_int("ep_size"))
        put(row, Col.NUM_GPUS, world.pos_int("world_size"))
        batch = world.pos_int("max_batch_size")
        for key in ("max_batch_size", "max_num_tokens", "scheduling_policy"):
            if world.obj.get(key) is not None:
                meta[key] = world.obj[key]
    ok = None
    if requests is not None:
        ok = requests.int_("num_requests")
        put(row, Col.MEAN_INPUT_LEN, requests.num("avg_input_length"))
        put(row, Col.MEAN_OUTPUT_LEN, requests.num("avg_output_length"))
        conc = requests.num("avg_num_concurrent_requests")
        if conc is not None:
            meta["avg_num_concurrent_requests"] = conc
    if ok is None:
        raise ParseError(
            src.rel, "request_info.num_requests", f"{HARNESS} {version} report: no request count"
        )
    if ok <= 0:
        raise ParseError(
            src.rel,
            "request_info.num_requests",
            f"{HARNESS} {version} report: {ok} requests completed, so there is no point to ingest",
        )
    put(row, Col.NUM_REQUESTS_SUCCESSFUL, ok)
    put(row, Col.NUM_REQUESTS_TOTAL, ok)
    _dataset_lengths(f.sub("dataset"), row)
    total_ms = perf.num("total_latency_ms")
    put(row, Col.DURATION, None if total_ms is None else total_ms / 1000.0)
    put(row, Col.REQUEST_THROUGHPUT, perf.num("request_throughput_req_s", required=True))
    output = perf.num("system_output_throughput_tok_s", required=True)
    total = perf.num("system_total_throughput_tok_s")
    put(row, Col.OUTPUT_TPUT, output)
    put(row, Col.TOTAL_TPUT, total)
    if total is not None and output is not None:
        put(row, Col.INPUT_TPUT, total - output)
    mean_ms = perf.num("avg_request_latency_ms")
    put(row, Col.MEAN_E2EL, None if mean_ms is None else mean_ms / 1000.0)
    _percentiles(perf.sub("request_latency_percentiles_ms"), row, "e2el")
    streaming = f.sub("streaming_metrics")
    if streaming is not None:
        for key, col in (("avg_ttft_ms", Col.MEAN_TTFT), ("avg_tpot_ms", Col.MEAN_TPOT)):
            value = streaming.num(key)
            put(row, col, None if value is None else value / 1000.0)
        _percentiles(streaming.sub("ttft_percentiles"), row, "ttft")
        _percentiles(streaming.sub("tpot_percentiles"), row, "tpot")
    else:
        warn(row, "run without --streaming: trtllm-bench reports no TTFT or TPOT")
    _load(row, meta, latency=False, batch=batch)
    put(row, Col.METADATA, {k: v for k, v in meta.items() if v is not None})
    return row


def _dataset_lengths(dataset: Fields | None, row: Row) -> None:
    """isl/osl when every request of the dataset had the same length."""
    if dataset is None:
        return
    for key, col in (("isl_stats", Col.ISL), ("osl_stats", Col.OSL)):
        stats = dataset.sub(key)
        if stats is None:
            continue
        low, high = stats.num("minimum"), stats.num("maximum")
        if low is not None and low == high and low == int(low) and low > 0:
            put(row, col, int(low))


# ---- the console report --------------------------------------------------------------------


def is_console_report(src: SourceFile) -> bool:
    """A captured trtllm-bench log: the report's overview, or the run's own start line."""
    return _OVERVIEW in src.data or _PREPARING.search(src.data[:65536]) is not None


@dataclass
class _Report:
    """One console report of a log, with what the log printed before it: the trtllm-bench
    command line (`--concurrency`, `--tp`, ...), the subcommand's start line and the version."""

    sections: dict[str, dict[str, str]] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)
    mode: str | None = None
    version: str | None = None


def _command(lines: list[str], i: int) -> dict[str, str]:
    """The flags of the `trtllm-bench` command at line i, with its continuation lines (after a
    `\\`, or indented under it)."""
    words = [lines[i]]
    j = i + 1
    while j < len(lines) and lines[j].strip() and not lines[j].lstrip().startswith(("```", "=")):
        if not (words[-1].rstrip().endswith("\\") or lines[j][:1] in (" ", "\t")):
            break
        words.append(lines[j])
        j += 1
    out: dict[str, str] = {}
    for m in _FLAG.finditer(" ".join(w.rstrip().rstrip("\\") for w in words)):
        if m["value"] is not None:
            out[m["key"].replace("-", "_")] = m["value"]
        else:
            out[m["key"].replace("-", "_")] = "true"
    return out


def _sections(text: str) -> list[_Report]:
    """The reports of a log: each section name -> label -> value (breakdown lines under
    `<KIND> <STAT>` labels), with the context printed before it."""
    reports: list[_Report] = []
    context = _Report()
    current: dict[str, str] | None = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        head = _SECTION.match(line)
        if head and i > 0 and lines[i - 1].startswith("====="):
            name = head["name"].strip().upper()
            if name in _BACKEND_SECTIONS or not reports or name in reports[-1].sections:
                reports.append(_Report({}, dict(context.args), context.mode, context.version))
            current = reports[-1].sections.setdefault(name, {})
            continue
        if "trtllm-bench" in line and " --" in " " + line.split("trtllm-bench", 1)[1] + " ".join(
            lines[i + 1 : i + 2]
        ):
            context.args = _command(lines, i)
            continue
        if (mode := _PREPARING_TEXT.search(line)) is not None:
            context.mode = mode[1]
        if (version := _VERSION_LINE.search(line)) is not None:
            context.version = version["v"]
        if current is None or line.startswith("====="):
            continue
        if m := _BREAKDOWN.match(line):
            current[f"{m['kind']} {m['stat']}"] = m["value"]
        elif m := _LINE.match(line):
            current[m["label"].strip()] = m["value"]
    return reports


def _num(section: dict[str, str], label: str, rel: str) -> float | None:
    value = section.get(label)
    if value is None or value in ("None", "N/A"):
        return None
    return parse_float(value, rel, label)


def _console_row(src: SourceFile, report_: _Report) -> Row:
    rel, report, args = src.rel, report_.sections, report_.args
    backend = report.get("ENGINE DETAILS") or report.get("PYTORCH BACKEND") or {}
    world = report.get("WORLD + RUNTIME INFORMATION", {})
    requests = report.get("REQUEST DETAILS", {})
    perf = report.get("PERFORMANCE OVERVIEW", {})
    version = (
        backend.get("TensorRT-LLM Version")
        or backend.get("TensorRT LLM Version")
        or report_.version
    )
    what = f"{HARNESS} {version or '(version not printed)'} console report"
    if not perf:
        raise ParseError(
            rel,
            "PERFORMANCE OVERVIEW",
            f"{what}: no PERFORMANCE OVERVIEW section (the run stopped before it reported)",
        )
    meta: dict[str, Any] = {"harness": HARNESS, "harness_version": version}
    row: Row = {Col.SCHEMA_VARIANT.value: _CONSOLE_VARIANT, Col.FRAMEWORK.value: "trt"}
    put(row, Col.MODEL, backend.get("Model") or args.get("model") or args.get("m"))
    quant, dtype = backend.get("Quantization"), backend.get("Dtype")
    put(row, Col.PRECISION, _precision(quant, dtype))
    if backend.get("KV Cache Dtype") not in (None, "None"):
        meta["kv_cache_dtype"] = backend["KV Cache Dtype"]
    meta["backend"] = "Pytorch" if "PYTORCH BACKEND" in report else "TRT"
    sizes = {}
    for label, col in (("TP Size", Col.TP), ("PP Size", Col.PP), ("EP Size", Col.EP)):
        value = _num(world, label, rel)
        if value is not None:
            sizes[col] = int(value)
            put(row, col, int(value))
    for flag, col in (("tp", Col.TP), ("pp", Col.PP), ("ep", Col.EP)):
        if col not in sizes and args.get(flag, "").isdigit():  # from the command line
            sizes[col] = int(args[flag])
            put(row, col, sizes[col])
    if Col.TP in sizes:
        put(row, Col.NUM_GPUS, sizes[Col.TP] * sizes.get(Col.PP, 1))
    batch_value = _num(world, "Max Runtime Batch Size", rel)
    batch = None if batch_value is None else int(batch_value)
    if batch is not None:
        meta["max_batch_size"] = batch
    # 0.17+ prints the request count under REQUEST DETAILS, 0.16 under PERFORMANCE OVERVIEW.
    counts = requests or perf
    ok = _num(counts, "Number of requests", rel)
    if ok is not None and ok <= 0:
        raise ParseError(
            rel,
            "Number of requests",
            f"{what}: {int(ok)} requests completed, so there is no point to ingest",
        )
    if ok is None:
        warn(row, "the report excerpt has no request count")
    else:
        put(row, Col.NUM_REQUESTS_SUCCESSFUL, int(ok))
        put(row, Col.NUM_REQUESTS_TOTAL, int(ok))
    measured = _num(counts, "Number of concurrent requests", rel)
    if measured is not None:
        meta["avg_num_concurrent_requests"] = measured
    lengths = []
    for label, mean_col, col in (
        ("Average Input Length (tokens)", Col.MEAN_INPUT_LEN, Col.ISL),
        ("Average Output Length (tokens)", Col.MEAN_OUTPUT_LEN, Col.OSL),
    ):
        value = _num(counts, label, rel)
        put(row, mean_col, value)
        if value is not None and value > 0 and value == int(value):
            put(row, col, int(value))
            lengths.append(f"{col.value}={int(value)}")
    if lengths:
        warn(row, f"{', '.join(lengths)} taken from the report's average lengths")
    req_tput = _num(perf, "Request Throughput (req/sec)", rel)
    put(row, Col.REQUEST_THROUGHPUT, req_tput)
    output = _num(perf, "Total Output Throughput (tokens/sec)", rel)
    if output is None:
        output = _num(perf, "Token Throughput (tokens/sec)", rel)  # <= 0.16: output tokens/s
    if output is None:
        raise ParseError(rel, "Total Output Throughput (tokens/sec)", f"{what}: no throughput")
    put(row, Col.OUTPUT_TPUT, output)
    total = _num(perf, "Total Token Throughput (tokens/sec)", rel)
    mean_in = row.get(Col.MEAN_INPUT_LEN.value)
    if total is None and req_tput is not None and mean_in is not None:
        put(row, Col.INPUT_TPUT, req_tput * mean_in)  # requests/s x average input length
    else:
        put(row, Col.TOTAL_TPUT, total)
        if total is not None:
            put(row, Col.INPUT_TPUT, total - output)
    duration = _num(perf, "Total Latency (ms)", rel)
    put(row, Col.DURATION, None if duration is None else duration / 1000.0)
    mean_e2el = _num(perf, "Average request latency (ms)", rel)
    put(row, Col.MEAN_E2EL, None if mean_e2el is None else mean_e2el / 1000.0)
    for label, col in (
        ("Average time-to-first-token [TTFT] (ms)", Col.MEAN_TTFT),
        ("Average time-per-output-token [TPOT] (ms)", Col.MEAN_TPOT),
    ):
        value = _num(perf, label, rel)
        put(row, col, None if value is None else value / 1000.0)
    for kind, lat in (("TTFT", "ttft"), ("TPOT", "tpot"), ("Latency", "e2el")):
        for stat, name in _PCT.items():
            value = _num(perf, f"{kind} {stat.upper()}", rel)
            if value is not None:
                row[f"{name}_{lat}"] = value / 1000.0
    if row.get(Col.MEAN_TTFT.value) is None:
        warn(row, "the report has no TTFT or TPOT (a run without --streaming, or <= 0.16)")
    concurrency = args.get("concurrency", "")
    if concurrency.isdigit() and int(concurrency) > 0:  # `--concurrency N` on the command line
        put(row, Col.CONC, int(concurrency))
    else:
        _load(row, meta, latency=report_.mode == "latency", batch=batch)
    put(row, Col.METADATA, {k: v for k, v in meta.items() if v is not None})
    return row


# ---- the reader ----------------------------------------------------------------------------


class TrtllmBenchReader:
    """`trtllm-bench` reports: the `--report_json` document or a log holding the console report."""

    name = "trtllm_bench"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        if doc is None:
            return is_console_report(src)
        return is_report_json(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        if doc is not None:
            return ReadResult(points=[_json_row(src, doc)])
        text = src.text()
        reports = _sections(text)
        if not any("PERFORMANCE OVERVIEW" in r.sections for r in reports):
            version = _VERSION_LINE.search(text)
            raise ParseError(
                src.rel,
                "PERFORMANCE OVERVIEW",
                f"{HARNESS} {version['v'] if version else '(version not printed)'} console log: "
                "no PERFORMANCE OVERVIEW section (the run stopped before it reported)",
            )
        points = [_console_row(src, r) for r in reports if "PERFORMANCE OVERVIEW" in r.sections]
        return ReadResult(points=points)


FILE_READERS = (TrtllmBenchReader(),)
