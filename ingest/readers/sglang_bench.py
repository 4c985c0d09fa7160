"""Reader for SGLang `python -m sglang.bench_serving --output-file X.jsonl` results.

Every run appends one JSON object (one point) as a line to the output file, so a sweep is one
JSON Lines file. The line has grown over SGLang releases (docs/formats.d/sglang_bench_serving.md):
the 2024 line carries only median TTFT/ITL and mean/median E2E latency, the 2025 line adds TPOT,
p99s, `concurrency` (the *measured* mean number of requests in flight) and `accept_length`, and
late-2025 lines add `tag`, `server_info` (the server's arguments) and vision-token counts.
Latencies are in milliseconds and end-to-end latency is spelled `*_e2e_latency_ms` (vLLM writes
`*_e2el_ms`), which together with `total_output_tokens_retokenized` tells the two harnesses apart.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ingest.contract.col import STATS, Col
from ingest.errors import ParseError, SchemaError
from ingest.normalize.row import normalize
from ingest.readers._common import Fields, put, warn
from ingest.readers.base import JsonDocs, ReadResult, Row, RowReject, SourceFile

_LAT = re.compile(
    r"^(?P<stat>mean|median|std|p\d+(?:\.\d+)?)_(?P<lat>ttft|tpot|itl|e2e_latency)_ms$"
)
_LAT_COL = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2e_latency": "e2el"}
# Copied into `metadata` as they are: what the line says beyond the canonical columns.
_META_KEYS = (
    "tag",
    "backend",
    "dataset_name",
    "random_range_ratio",
    "sharegpt_output_len",
    "total_output_tokens_retokenized",
    "total_input_text_tokens",
    "total_input_vision_tokens",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
)
_SERVER_META_KEYS = (
    "version",
    "model_path",
    "served_model_name",
    "tp_size",
    "pp_size",
    "dp_size",
    "ep_size",
    "enable_dp_attention",
    "nnodes",
    "dtype",
    "quantization",
    "kv_cache_dtype",
    "attention_backend",
    "disaggregation_mode",
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_draft_model_path",
)
_RANDOM_DATASETS = ("random", "random-ids")
_NO_TPOT = (
    "no TPOT in this line (sglang.bench_serving before 2025 wrote only median TTFT/ITL and E2E "
    "latency): interactivity cannot be derived"
)


def _is_result(doc: Any) -> bool:
    if not isinstance(doc, dict) or "completed" not in doc:
        return False
    e2e = False
    for key in doc:
        if key.endswith("_e2el_ms"):  # vLLM's spelling: not ours
            return False
        e2e = e2e or key.endswith("_e2e_latency_ms")
    return e2e or "total_output_tokens_retokenized" in doc


def _request_rate(f: Fields) -> float | str | None:
    """The offered rate: a number, inf (a float, or the strings 'inf'/'Infinity'), or 'trace'."""
    value = f.obj.get("request_rate")
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        rate = float(value)
        if math.isnan(rate) or rate <= 0:
            raise f.error("request_rate", f"expected a positive request rate, got {value!r}")
        return rate
    if isinstance(value, str):
        if value.strip().lower() in ("inf", "infinity", "+inf"):
            return math.inf
        return value  # "trace": replayed trace timestamps (mooncake), no offered rate
    raise f.error("request_rate", f"expected a number or 'inf', got {type(value).__name__}")


def _load(f: Fields, row: Row, meta: dict[str, Any]) -> None:
    conc = f.pos_int("max_concurrency")
    rate = _request_rate(f)
    put(row, Col.CONC, conc)
    if isinstance(rate, float) and (math.isfinite(rate) or conc is None):
        put(row, Col.REQUEST_RATE, rate)
    elif rate is not None:
        meta["request_rate"] = rate if isinstance(rate, str) else "inf"
    # The measured mean number of requests in flight (sum of E2E latencies / duration), not the load.
    concurrency = f.num("concurrency")
    if concurrency is not None:
        meta["measured_concurrency"] = concurrency


def _requests(f: Fields, row: Row) -> None:
    completed = f.int_("completed", required=True)
    assert completed is not None
    if completed <= 0:
        raise f.error(
            "completed",
            f"{completed} requests completed: the benchmark run failed and every metric is 0; "
            "there is no point to ingest",
        )
    put(row, Col.NUM_REQUESTS_SUCCESSFUL, completed)
    # --output-details lists every issued request, failed ones with an error and 0 output tokens.
    errors = f.obj.get("errors")
    if isinstance(errors, list) and errors:
        put(row, Col.NUM_REQUESTS_TOTAL, len(errors))
    duration = f.num("duration")
    put(row, Col.DURATION, duration)
    total_in, total_out = f.int_("total_input_tokens"), f.int_("total_output_tokens")
    put(row, Col.TOTAL_INPUT_TOKENS, total_in)
    put(row, Col.TOTAL_OUTPUT_TOKENS, total_out)
    put(row, Col.MEAN_INPUT_LEN, None if total_in is None else total_in / completed)
    put(row, Col.MEAN_OUTPUT_LEN, None if total_out is None else total_out / completed)
    # The 2024 line has neither; bench_serving computes them exactly so (completed / dur_s, ...).
    request_tput, input_tput = f.num("request_throughput"), f.num("input_throughput")
    if duration and request_tput is None:
        request_tput = completed / duration
    if duration and input_tput is None and total_in is not None:
        input_tput = total_in / duration
    put(row, Col.REQUEST_THROUGHPUT, request_tput)
    put(row, Col.INPUT_TPUT, input_tput)
    put(row, Col.OUTPUT_TPUT, f.num("output_throughput", required=True))
    put(row, Col.TOTAL_TPUT, f.num("total_throughput"))


def _latencies(f: Fields, row: Row, meta: dict[str, Any]) -> None:
    for key in f.obj:
        m = _LAT.match(key)
        if m is None:
            continue
        value = f.num(key)
        if value is None:
            continue
        if m["stat"] in STATS:
            put(row, Col(f"{m['stat']}_{_LAT_COL[m['lat']]}"), value / 1000.0)
        else:
            meta[key] = value  # std_*_ms: no column
    if row.get(Col.MEDIAN_TPOT.value) is None:
        warn(row, _NO_TPOT)


def _lengths(f: Fields, row: Row) -> None:
    dataset = f.str_("dataset_name")
    if dataset not in _RANDOM_DATASETS:
        return
    isl, osl = f.pos_int("random_input_len"), f.pos_int("random_output_len")
    put(row, Col.ISL, isl)
    put(row, Col.OSL, osl)
    ratio = f.num("random_range_ratio")
    if ratio is not None and ratio < 1 and isl is not None:
        mean_in = row.get(Col.MEAN_INPUT_LEN.value)
        seen = "" if mean_in is None else f"; the mean input was {mean_in:.1f} tokens"
        warn(
            row,
            f"random_range_ratio={ratio:g}: request lengths were drawn up to the nominal "
            f"isl={isl}/osl={osl}, not fixed at them{seen}",
        )


def _server(f: Fields, row: Row, meta: dict[str, Any]) -> None:
    """Model, topology and speculative decoding from `server_info` (the server's arguments)."""
    info = f.sub("server_info")
    if info is None:
        return
    meta["server_info"] = {k: info.obj[k] for k in _SERVER_META_KEYS if info.has(k)}
    put(row, Col.MODEL, info.str_("model_path") or info.str_("served_model_name"))
    mode = info.str_("disaggregation_mode")
    if mode not in (None, "null"):
        put(row, Col.DISAGG, True)
    # A PD router answers for one side only: its sizes are not the deployment's GPU count.
    elif info.has("tp_size"):
        tp, pp = info.pos_int("tp_size") or 1, info.pos_int("pp_size") or 1
        dp, dpa = info.pos_int("dp_size") or 1, bool(info.bool_("enable_dp_attention"))
        put(row, Col.TP, tp)
        put(row, Col.PP, pp)
        put(row, Col.EP, info.pos_int("ep_size"))
        put(row, Col.DP_ATTENTION, dpa)
        # DP attention splits the TP group; plain --dp-size launches dp replicas of tp x pp GPUs.
        put(row, Col.NUM_GPUS, tp * pp * (1 if dpa else dp))
    algo = info.str_("speculative_algorithm")
    if info.has("speculative_algorithm") and algo:
        method = algo.lower()
        put(row, Col.SPEC_METHOD, "mtp" if method == "nextn" else method)
        put(row, Col.SPEC_DECODING, "mtp")  # InferenceX labels every speculative arm `mtp`
        put(row, Col.DRAFT_MODEL, info.str_("speculative_draft_model_path"))
        put(row, Col.NUM_SPEC_TOKENS, info.pos_int("speculative_num_steps"))
    elif "speculative_algorithm" in info.obj:
        put(row, Col.SPEC_DECODING, "none")


def _read_line(src: SourceFile, doc: Any) -> Row:
    """One result line as a partial canonical row.

    Raises:
        ParseError: when the line is not a usable bench_serving result.
    """
    if not isinstance(doc, dict):
        raise ParseError(src.rel, "", "expected a JSON object (an sglang.bench_serving result)")
    f = Fields(src.rel, doc)
    row: Row = {Col.SCHEMA_VARIANT.value: SglangBenchServingReader.name}
    meta: dict[str, Any] = {k: doc[k] for k in _META_KEYS if doc.get(k) is not None}
    _requests(f, row)
    _load(f, row, meta)
    _latencies(f, row, meta)
    _lengths(f, row)
    backend = f.str_("backend") or ""
    # The harness also drives vLLM, TensorRT-LLM and LMDeploy servers (--backend vllm, trt, ...).
    framework = next((n for n in ("vllm", "trt", "lmdeploy") if backend.startswith(n)), "sglang")
    put(row, Col.FRAMEWORK, framework)
    put(row, Col.MODEL, f.str_("model_id") or f.str_("model") or f.str_("tokenizer_id"))
    _server(f, row, meta)
    al = f.num("accept_length")
    if al is not None:
        if al < 1:
            raise f.error("accept_length", f"expected an acceptance length >= 1, got {al}")
        put(row, Col.AL_MEASURED, al)
        put(row, Col.AL_SOURCE, "bench_json")
    put(row, Col.METADATA, meta or None)
    return row


def _identity(src: SourceFile, row: Row) -> tuple[Any, ...]:
    """The point's arm and load, validating the row (SchemaError names what is wrong)."""
    full = normalize(
        row, run_id="", source_path=src.rel, source_sha256="", artifact="", ingested_at=None
    )
    return (full[Col.ARM_ID.value], full[Col.CONC.value], full[Col.REQUEST_RATE.value])


class SglangBenchServingReader:
    """`sglang.bench_serving --output-file` JSON Lines: one point per line."""

    name = "sglang_bench_serving"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        if isinstance(doc, JsonDocs):
            return any(_is_result(d) for d in doc.docs)
        return _is_result(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        docs = doc if isinstance(doc, JsonDocs) else JsonDocs((doc,), (1,))
        result = ReadResult()
        seen: dict[tuple[Any, ...], int] = {}
        for line, item in zip(docs.lines, docs.docs, strict=True):
            where = f"line {line}"
            try:
                row = _read_line(src, item)
                key = _identity(src, row)
            except (ParseError, SchemaError) as exc:
                result.rejects.append(RowReject(exc.field, exc.reason, where))
                continue
            if key in seen:
                reason = (
                    f"same configuration and load as line {seen[key]} (a repeated run appended "
                    f"to the same file?); line {seen[key]} was kept"
                )
                result.rejects.append(RowReject("", reason, where))
                continue
            seen[key] = line
            result.points.append(row)
        if not result.points and result.rejects and len(docs.docs) == 1:
            only = result.rejects[0]
            raise ParseError(src.rel, only.field, only.reason)
        return result


FILE_READERS = (SglangBenchServingReader(),)
