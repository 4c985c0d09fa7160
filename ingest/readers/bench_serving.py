"""Readers for vLLM `benchmark_serving.py` / `vllm bench serve` result JSON (formats.md 1).

Two schemas share the harness. The HEAD one (`bench_serving_ms`) has latencies in milliseconds
(`median_ttft_ms`, `p99.9_tpot_ms` with a literal dot), the literal `request_goodput:` key,
per-request `input_lens`/`output_lens` and, in newer vLLM, `spec_decode_*` measurements. The
`benchmark_serving_random.py` variant (`bench_serving_random_s`) has latencies in seconds, median
and p99 only, and no topology at all: its model, parallelism and lengths live in the file name.
Neither JSON carries the GPU count, so it comes from the file name (formats.md 1.3, 7.1).
"""

from __future__ import annotations

import re
from typing import Any

from ingest.errors import ParseError
from ingest.readers._common import Fields, put, warn
from ingest.readers._names import NameFacts, parse_name
from ingest.readers.base import ReadResult, Row, SourceFile
from ingest.schema import STATS, Col

_LAT_MS = re.compile(r"^(?P<stat>mean|median|p\d+(?:\.\d+)?)_(?P<lat>ttft|tpot|itl|e2el)_ms$")
_LAT_S = re.compile(r"^(?P<stat>mean|median|p\d+(?:\.\d+)?)_(?P<lat>ttft|tpot|itl|e2el)$")
# bench_serving fails a run with more than 5% failed requests (after writing the JSON).
_MAX_FAILED = 0.05
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


def _has_latency(doc: dict[str, Any], pattern: re.Pattern[str]) -> bool:
    return any(pattern.match(key) for key in doc)


def _requests(f: Fields, row: Row) -> int:
    completed = f.int_("completed", required=True)
    assert completed is not None
    prompts = f.pos_int("num_prompts")
    if completed < 0:
        raise f.error("completed", f"expected a non-negative request count, got {completed}")
    if completed == 0:
        issued = "?" if prompts is None else str(prompts)
        raise f.error(
            "completed",
            f"0 of {issued} requests completed: the benchmark run failed and every metric is 0; "
            "there is no point to ingest",
        )
    if prompts is not None and completed > prompts:
        raise f.error("completed", f"{completed} completed requests exceed num_prompts={prompts}")
    put(row, Col.NUM_REQUESTS_TOTAL, prompts)
    put(row, Col.NUM_REQUESTS_SUCCESSFUL, completed)
    if prompts and (prompts - completed) / prompts > _MAX_FAILED:
        warn(row, f"{prompts - completed} of {prompts} requests failed (bench_serving rejects >5%)")
    put(row, Col.CONC, f.pos_int("max_concurrency"))
    put(row, Col.DURATION, f.num("duration"))
    put(row, Col.REQUEST_THROUGHPUT, f.num("request_throughput"))
    put(row, Col.TOTAL_INPUT_TOKENS, f.int_("total_input_tokens"))
    put(row, Col.TOTAL_OUTPUT_TOKENS, f.int_("total_output_tokens"))
    put(row, Col.MODEL, f.str_("model_id") or f.str_("tokenizer_id"))
    return completed


def _latencies(f: Fields, row: Row, pattern: re.Pattern[str], per_second: float) -> None:
    # Divide like process_result.py does (ms / 1000), so values match its aggregates exactly.
    for key in f.obj:
        m = pattern.match(key)
        if m and m["stat"] in STATS:
            value = f.num(key)
            put(row, Col(f"{m['stat']}_{m['lat']}"), None if value is None else value / per_second)


def _mean_lens(f: Fields, row: Row, completed: int) -> None:
    for key, col, total_key in (
        ("input_lens", Col.MEAN_INPUT_LEN, "total_input_tokens"),
        ("output_lens", Col.MEAN_OUTPUT_LEN, "total_output_tokens"),
    ):
        lens = f.nums(key)
        total = f.num(total_key)
        if lens:
            put(row, col, sum(lens) / len(lens))
        elif total is not None:
            put(row, col, total / completed)


def _first_num(f: Fields, *keys: str) -> float | None:
    for key in keys:
        if f.has(key):
            return f.num(key)
    return None


def _spec_decode(f: Fields, row: Row) -> None:
    if not any(key.startswith("spec_decode_") for key in f.obj):
        return
    drafts = f.num("spec_decode_num_drafts")
    accepted = _first_num(f, "spec_decode_num_accepted_tokens", "spec_decode_accepted_tokens")
    put(row, Col.SPEC_DRAFTS, drafts)
    put(
        row,
        Col.SPEC_DRAFT_TOKENS,
        _first_num(f, "spec_decode_num_draft_tokens", "spec_decode_draft_tokens"),
    )
    put(row, Col.SPEC_ACCEPTED_TOKENS, accepted)
    al = f.num("spec_decode_acceptance_length")
    put(row, Col.AL_MEASURED, al)
    if (
        al is not None
        and drafts
        and accepted is not None
        and abs(al - (1 + accepted / drafts)) > 0.01
    ):
        warn(row, f"spec_decode_acceptance_length={al} differs from 1 + accepted/drafts")
    rate = f.num("spec_decode_acceptance_rate")
    if rate is not None:
        if not 0 <= rate <= 100:
            raise f.error("spec_decode_acceptance_rate", f"expected a percentage, got {rate}")
        put(row, Col.DRAFT_ACCEPTANCE_RATE, rate / 100)  # vLLM reports it in percent
    key = "spec_decode_per_position_acceptance_rates"
    per_pos = f.nums(key)
    if per_pos:
        if any(not 0 <= r <= 100 for r in per_pos):
            raise f.error(key, f"expected rates in 0..1 (or percentages), got {per_pos}")
        if any(r > 1 for r in per_pos):
            per_pos = [r / 100 for r in per_pos]
            warn(row, f"{key} given in percent; divided by 100")
        put(row, Col.ACCEPT_RATE_PER_POS, per_pos)
    put(row, Col.AL_SOURCE, "bench_json")


def _throughput_ms(f: Fields, row: Row, facts: NameFacts) -> None:
    total, output = f.num("total_token_throughput"), f.num("output_throughput")
    put(row, Col.TOTAL_TPUT, total)
    put(row, Col.OUTPUT_TPUT, output)
    if total is not None and output is not None:
        put(row, Col.INPUT_TPUT, total - output)
    pre, dec, gpus = facts.prefill_gpus, facts.decode_gpus, facts.gpus
    if pre is None or dec is None or not gpus:
        return
    # InferenceX multinode: output per decode GPU, input per prefill GPU (formats.md 2.3).
    put(row, Col.TPUT_PER_GPU, None if total is None else total / gpus)
    put(row, Col.OUTPUT_TPUT_PER_GPU, None if output is None else output / (dec or gpus))
    if total is not None and output is not None and pre:
        put(row, Col.INPUT_TPUT_PER_GPU, (total - output) / pre)


def _topology_ms(src: SourceFile, f: Fields, row: Row, facts: NameFacts) -> None:
    put(row, Col.ISL, facts.isl)
    put(row, Col.OSL, facts.osl)
    put(row, Col.RUNNER, facts.runner)
    if f.has("tp"):  # `--metadata tp=...` pairs land at the top level
        put(row, Col.TP, f.pos_int("tp"))
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


class BenchServingReader:
    """`benchmark_serving.py` / `vllm bench serve` raw results, latencies in milliseconds."""

    name = "bench_serving_ms"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return (
            isinstance(doc, dict)
            and "max_concurrency" in doc
            and "completed" in doc
            and _has_latency(doc, _LAT_MS)
        )

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        f = Fields.top(src, doc, "a benchmark_serving result")
        row: Row = {Col.SCHEMA_VARIANT.value: self.name}
        completed = _requests(f, row)
        facts = parse_name(src.rel)
        _topology_ms(src, f, row, facts)
        _throughput_ms(f, row, facts)
        _latencies(f, row, _LAT_MS, 1000.0)
        _mean_lens(f, row, completed)
        _spec_decode(f, row)
        if row.get(Col.CONC.value) is None:
            put(row, Col.CONC, facts.conc)
        return ReadResult(points=[row])


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
