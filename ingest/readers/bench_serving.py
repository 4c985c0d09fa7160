"""Readers for vLLM `benchmark_serving.py` / `vllm bench serve` result JSON (formats.md 1).

Two schemas share the harness. The HEAD one (`bench_serving_ms`) has latencies in milliseconds
(`median_ttft_ms`, `p99.9_tpot_ms` with a literal dot); it has grown since 2024: `max_concurrency`
and `burstiness` (late 2024; before that the load is `request_rate` alone, a number or "inf"),
`total_token_throughput` (older files have `input_throughput` instead), the literal
`request_goodput:` key (later `request_goodput`), `failed`, `spec_decode_*` measurements, and any
`--metadata key=value` pairs merged into the top level as strings. `--append-result` appends one
document per line to the same file; each document is one point. The
`benchmark_serving_random.py` variant (`bench_serving_random_s`) has latencies in seconds, median
and p99 only, and no topology at all: its model, parallelism and lengths live in the file name.
The GPU count comes from `--metadata` pairs when present, else from the file name (formats.md 1.3,
7.1); docs/formats.d/vllm_bench_serve.md has the details.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError, SchemaError
from ingest.readers._common import Fields, put, warn
from ingest.readers._names import NameFacts, parse_name
from ingest.readers._serving_metrics import (
    _LAT_MS,
    _LAT_S,
    _has_latency,
    _latencies,
    _load,
    _mean_lens,
    _requests,
    _spec_decode,
    _throughput_ms,
)
from ingest.readers.base import JsonDocs, ReadResult, Row, RowReject, SourceFile

_NO_GPUS = (
    "GPU count unknown: the JSON carries no topology and the file name has neither an InferenceX "
    "RESULT_FILENAME topology (..._tp8-ep1-dpafalse_...) nor a GPU split (..._gpus_16_ctx_8_gen_8); "
    "per-GPU throughput cannot be computed. Rename the file to carry one of them, or add "
    "`--metadata tp=N` to the benchmark command"
)
_NO_GPUS_RANDOM = (
    "GPU count unknown: benchmark_serving_random results carry their topology only in the file "
    "name, expected {model}_[{precision}_]{framework}_{tp|tep|dep}{N}_isl{I}_osl{O}_conc{C}.json"
)
# {model}_[{precision}_]{framework}_{tp|tep|dep}{N}_isl{I}_osl{O}_conc{C}
_RANDOM_NAME = re.compile(
    r"^(?P<model>.+?)_(?:(?P<prec>fp8|fp4|bf16|fp16|int4|int8|mxfp4|nvfp4)_)?"
    r"(?P<fw>vllm|sglang|trt|trtllm)_(?P<par>tp|tep|dep)(?P<n>\d+)"
    r"_isl(?P<isl>\d+)_osl(?P<osl>\d+)_conc(?P<conc>\d+)$"
)


_VLLM_KEYS = frozenset(
    [
        "date",
        "endpoint_type",
        "backend",
        "label",
        "model_id",
        "tokenizer_id",
        "best_of",
        "use_beam_search",
        "num_prompts",
        "request_rate",
        "burstiness",
        "max_concurrency",
        "ramp_up_strategy",
        "ramp_up_start_rps",
        "ramp_up_end_rps",
        "duration",
        "completed",
        "failed",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "request_goodput",
        "request_goodput:",
        "input_throughput",
        "output_throughput",
        "total_token_throughput",
        "max_output_tokens_per_s",
        "max_concurrent_requests",
        "rtfx",
        "input_lens",
        "output_lens",
        "ttfts",
        "itls",
        "latencies",
        "start_times",
        "queue_times",
        "generated_texts",
        "errors",
        "rps_change_events",
        "total_input_sequences",
        "input_sequence_throughput",
        "percentiles",
    ]
)
_VLLM_KEY = re.compile(
    r"^(?:(?:mean|median|std|p\d+(?:\.\d+)?)_\w+_ms|(?:spec_decode|diffusion|probe)_\w+)$"
)
# --metadata spellings that carry the topology or hardware (values are strings there).
_GPU_SPEC = re.compile(r"^\s*(?P<n>\d+)\s*[xX*]\s*(?P<hw>[A-Za-z][\w.\-]*)\s*$")
_COUNT_KEYS = ("num_gpus", "gpus", "gpu_count", "n_gpus", "ngpus", "world_size")
_HW_KEYS = ("hw", "hardware", "gpu_type", "gpu_model", "gpu_name", "accelerator")
_TP_KEYS = ("tp", "tp_size", "tensor_parallel_size", "tensor-parallel-size")
_PP_KEYS = ("pp", "pp_size", "pipeline_parallel_size", "pipeline-parallel-size")
_ISL_KEYS = ("isl", "input_len", "random_input_len")
_OSL_KEYS = ("osl", "output_len", "random_output_len")
# Generic names: ..._tp8_pp2_... in the file name, a 2xH100-80GB-SXM directory.
_NAME_TP = re.compile(r"(?:^|[_\-.])tp(?P<n>\d+)(?=[_\-.]|$)")
_NAME_PP = re.compile(r"(?:^|[_\-.])pp(?P<n>\d+)(?=[_\-.]|$)")


def metadata_of(doc: dict[str, Any]) -> dict[str, Any]:
    """The top-level keys vLLM does not write itself: `--metadata` pairs, sweep parameters."""
    return {k: v for k, v in doc.items() if k not in _VLLM_KEYS and not _VLLM_KEY.match(k)}


def _meta_int(f: Fields, keys: tuple[str, ...]) -> tuple[str, int] | None:
    """The first of `keys` present, as a positive integer (`--metadata tp=8` gives the string)."""
    for key in keys:
        value = f.obj.get(key)
        if value is None:
            continue
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise f.error(
                key, f"expected a positive integer (e.g. --metadata {key}=8), got {value!r}"
            )
        return key, value
    return None


def _meta_str(f: Fields, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = f.obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


class _Topo:
    """GPU count, tp/pp and hardware as one source (the JSON or the file name) states them."""

    def __init__(self, gpus: int | None, tp: int | None, pp: int | None, hw: str | None) -> None:
        self.gpus, self.tp, self.pp, self.hw = gpus, tp, pp, hw

    @property
    def count(self) -> int | None:
        return self.gpus or (self.tp * (self.pp or 1) if self.tp else None)


def _json_topology(f: Fields) -> tuple[_Topo, str]:
    """What the document's own (`--metadata`) fields say, and where it came from."""
    gpus: int | None = None
    hw = _meta_str(f, _HW_KEYS)
    said: list[str] = []
    gpu = f.obj.get("gpu")
    if isinstance(gpu, str) and gpu.strip():
        m = _GPU_SPEC.match(gpu)
        if m:
            gpus, hw = int(m["n"]), hw or m["hw"]
        elif not gpu.strip().isdigit():  # a bare number is as likely a device index
            hw = hw or gpu.strip()
        said.append(f"gpu={gpu}")
    count = _meta_int(f, _COUNT_KEYS)
    if count is not None:
        if gpus is not None and gpus != count[1]:
            raise f.error(count[0], f"{count[1]} GPUs contradicts gpu={gpu!r} in the same file")
        gpus = count[1]
        said.append(f"{count[0]}={count[1]}")
    tp, pp = _meta_int(f, _TP_KEYS), _meta_int(f, _PP_KEYS)
    said += [f"{k}={v}" for k, v in (t for t in (tp, pp) if t is not None)]
    if _meta_str(f, _HW_KEYS):
        said.append(f"hw={hw}")
    topo = _Topo(gpus, tp[1] if tp else None, pp[1] if pp else None, hw)
    return topo, ", ".join(said)


def _name_topology(rel: str, facts: NameFacts) -> _Topo:
    """What the file name and its directory say, InferenceX names first."""
    path = PurePosixPath(rel)
    gpus, hw = facts.gpus, None
    m = _GPU_SPEC.match(path.parent.name)
    if m:
        gpus, hw = gpus or int(m["n"]), m["hw"]
    stem = path.name.removesuffix(".json").removesuffix(".jsonl")
    tp_m, pp_m = _NAME_TP.search(stem), _NAME_PP.search(stem)
    tp = facts.tp or (int(tp_m["n"]) if tp_m else None)
    pp = facts.pp or (int(pp_m["n"]) if pp_m else None)
    return _Topo(gpus, tp, pp, hw)


def _topology_ms(src: SourceFile, f: Fields, row: Row, facts: NameFacts) -> None:
    put(row, Col.ISL, facts.isl)
    put(row, Col.OSL, facts.osl)
    put(row, Col.RUNNER, facts.runner)
    own, said = _json_topology(f)
    name = _name_topology(src.rel, facts)
    if own.count or own.hw:
        # The file's own fields are the most trusted; the name only fills what they lack.
        put(row, Col.HW_LABEL, own.hw or name.hw)
        put(row, Col.TP, own.tp)
        put(row, Col.PP, own.pp)
        put(row, Col.NUM_GPUS, own.gpus)
        if own.count and name.count and own.count != name.count:
            warn(
                row,
                f"the JSON says {own.count} GPUs ({said}) but the file name says {name.count}; "
                "the JSON's count is used",
            )
        if own.hw and name.hw and own.hw.lower() != name.hw.lower():
            warn(row, f"the JSON says hardware {own.hw} but the file name says {name.hw}")
        if own.count:
            return
    if facts.gpus:
        put(row, Col.NUM_GPUS, facts.gpus)
        put(row, Col.PREFILL_GPUS, facts.prefill_gpus)
        put(row, Col.DECODE_GPUS, facts.decode_gpus)
        split = (
            ""
            if facts.prefill_gpus is None
            else f" ({facts.prefill_gpus} ctx + {facts.decode_gpus} gen)"
        )
        if facts.prefill_gpus is not None:
            put(row, Col.IS_MULTINODE, True)
            put(row, Col.DISAGG, True)
        warn(row, f"num_gpus={facts.gpus}{split} taken from the file name")
        return
    if facts.tp is None:
        if name.count:
            put(row, Col.TP, name.tp)
            put(row, Col.PP, name.pp)
            put(row, Col.NUM_GPUS, name.gpus)
            put(row, Col.HW_LABEL, row.get(Col.HW_LABEL.value) or name.hw)
            warn(row, f"GPU count {name.count} taken from the file name and its directory")
            return
        # Kept with its totals; normalize notes that per-GPU throughput cannot be computed.
        warn(row, _NO_GPUS)
        return
    for col, value in (
        (Col.TP, facts.tp),
        (Col.PP, facts.pp),
        (Col.DCP_SIZE, facts.dcp),
        (Col.PCP_SIZE, facts.pcp),
        (Col.EP, facts.ep),
        (Col.DP_ATTENTION, facts.dp_attention),
        (Col.DISAGG, facts.disagg),
        (Col.SPEC_DECODING, facts.spec),
        (Col.PRECISION, facts.precision),
        (Col.FRAMEWORK, facts.framework),
        (Col.MODEL_PREFIX, facts.model_prefix),
    ):
        put(row, col, value)
    warn(row, "topology, precision, framework and spec decoding taken from the RESULT_FILENAME")


def _metadata(f: Fields, row: Row) -> None:
    """Keep the `--metadata` pairs; take framework, precision and nominal lengths from them."""
    meta = metadata_of(dict(f.obj))
    if not meta:
        return
    put(row, Col.METADATA, meta)
    for col, key in ((Col.FRAMEWORK, "framework"), (Col.PRECISION, "precision")):
        if row.get(col.value) is None:
            put(row, col, _meta_str(f, (key,)))
    for col, keys in ((Col.ISL, _ISL_KEYS), (Col.OSL, _OSL_KEYS)):
        got = _meta_int(f, keys)
        if got is None:
            continue
        if row.get(col.value) not in (None, got[1]):
            warn(row, f"{got[0]}={got[1]} in the JSON differs from {col}={row[col.value]}")
        row[col.value] = got[1]


_TWIN_KEY: tuple[Col, ...] = (
    *(Col.CONC, Col.REQUEST_RATE, Col.MODEL, Col.FRAMEWORK, Col.PRECISION, Col.HW_LABEL),
    *(Col.NUM_GPUS, Col.TP, Col.PP, Col.ISL, Col.OSL),
)


def _flag_metadata_only_twins(points: list[Row]) -> None:
    """Warn on documents of one file at the same load and configuration that differ only in their
    `--metadata` (llm-d's deployment=base/kvcache): the arm identity does not include metadata."""
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for row in points:
        groups.setdefault(tuple(row.get(c.value) for c in _TWIN_KEY), []).append(row)
    for twins in groups.values():
        if len(twins) > 1:
            for row in twins:
                warn(
                    row,
                    f"{len(twins)} documents of this file share this load and configuration and "
                    "differ only in their --metadata; tell them apart by the metadata column",
                )


def _is_result(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and "completed" in doc
        and ("max_concurrency" in doc or "request_rate" in doc)
        and _has_latency(doc, _LAT_MS)
        and not _is_sglang_line(doc)
    )


def _is_sglang_line(doc: dict[str, Any]) -> bool:
    """SGLang's bench_serving line (`*_e2e_latency_ms`, `total_output_tokens_retokenized`, no
    vLLM `*_e2el_ms`): `ingest.readers.sglang_bench` reads it, so this reader must not claim it."""
    if any(key.endswith("_e2el_ms") for key in doc):
        return False
    return "total_output_tokens_retokenized" in doc or any(
        key.endswith("_e2e_latency_ms") for key in doc
    )


class BenchServingReader:
    """`benchmark_serving.py` / `vllm bench serve` raw results, latencies in milliseconds.

    One point per JSON document: a file written with `--append-result` (or any JSON Lines file of
    results) gives one point per line, and a bad line is rejected on its own.
    """

    name = "bench_serving_ms"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        if isinstance(doc, JsonDocs):
            return bool(doc.docs) and _is_result(doc.docs[0])
        return _is_result(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        if not isinstance(doc, JsonDocs):
            return ReadResult(points=[self._point(src, doc)])
        out = ReadResult()
        for line, one in zip(doc.lines, doc.docs, strict=True):
            try:
                out.points.append(self._point(src, one))
            except (ParseError, SchemaError) as exc:
                out.rejects.append(RowReject(exc.field, exc.reason, f"line {line}"))
        _flag_metadata_only_twins(out.points)
        return out

    def _point(self, src: SourceFile, doc: Any) -> Row:
        f = Fields.top(src, doc, "a benchmark_serving result")
        row: Row = {Col.SCHEMA_VARIANT.value: self.name}
        completed = _requests(f, row)
        facts = parse_name(src.rel)
        _topology_ms(src, f, row, facts)
        _throughput_ms(f, row, facts)
        _latencies(f, row, _LAT_MS, 1000.0)
        _mean_lens(f, row, completed)
        _spec_decode(f, row)
        _load(f, row, facts)
        _metadata(f, row)
        return row


class BenchServingRandomReader:
    """`benchmark_serving_random.py` results: seconds, median/p99, topology in the file name."""

    name = "bench_serving_random_s"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return (
            isinstance(doc, dict)
            and "max_concurrency" in doc
            and "completed" in doc
            and "input_throughput" in doc
            and _has_latency(doc, _LAT_S)
            and not _has_latency(doc, _LAT_MS)
            and "hw" not in doc
        )

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        f = Fields.top(src, doc, "a benchmark_serving_random result")
        row: Row = {Col.SCHEMA_VARIANT.value: self.name}
        completed = _requests(f, row)
        stem = src.name.removesuffix(".json")
        m = _RANDOM_NAME.match(stem)
        if m is None:
            raise ParseError(src.rel, Col.NUM_GPUS.value, _NO_GPUS_RANDOM)
        n = int(m["n"])
        ep = 1 if m["par"] == "tp" else n
        put(row, Col.TP, n)
        put(row, Col.EP, ep)
        put(row, Col.DP_ATTENTION, m["par"] == "dep")
        put(row, Col.FRAMEWORK, m["fw"])
        put(row, Col.PRECISION, m["prec"])
        put(row, Col.ISL, int(m["isl"]))
        put(row, Col.OSL, int(m["osl"]))
        precision = f", precision={m['prec']}" if m["prec"] else ""
        warn(
            row,
            f"from the file name: tp={n} ep={ep} dp_attention={m['par'] == 'dep'} "
            f"('{m['par']}{n}': TEP = TP with expert parallel, DEP = DP-attention with EP), "
            f"framework={m['fw']}{precision}, isl={m['isl']}, osl={m['osl']}",
        )
        if row.get(Col.CONC.value) is None:
            put(row, Col.CONC, int(m["conc"]))
        inp, out = f.num("input_throughput"), f.num("output_throughput")
        put(row, Col.INPUT_TPUT, inp)
        put(row, Col.OUTPUT_TPUT, out)
        put(row, Col.TOTAL_TPUT, None if inp is None or out is None else inp + out)
        _latencies(f, row, _LAT_S, 1.0)
        _mean_lens(f, row, completed)
        return ReadResult(points=[row])


FILE_READERS = (BenchServingReader(), BenchServingRandomReader())
