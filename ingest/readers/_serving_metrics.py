"""The measurements of a vLLM `benchmark_serving.py` / `vllm bench serve` result document.

Shared by the bench_serving readers and the `vllm bench sweep serve` reader (whose points are
the same documents): request counts, latencies, lengths, speculative-decoding counters,
throughputs and the load. formats.md 1 and docs/formats.d/vllm_bench_serve.md describe the keys.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ingest.contract.col import STATS, Col
from ingest.readers._common import Fields, put, warn
from ingest.readers._names import NameFacts
from ingest.readers.base import Row

_LAT_MS = re.compile(r"^(?P<stat>mean|median|p\d+(?:\.\d+)?)_(?P<lat>ttft|tpot|itl|e2el)_ms$")
_LAT_S = re.compile(r"^(?P<stat>mean|median|p\d+(?:\.\d+)?)_(?P<lat>ttft|tpot|itl|e2el)$")
# bench_serving fails a run with more than 5% failed requests (after writing the JSON).
_MAX_FAILED = 0.05


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
    output = f.num("output_throughput")
    total = f.num("total_token_throughput")
    inp = f.num("input_throughput")  # 2024 files: no total_token_throughput, input instead
    if total is None and inp is not None and output is not None:
        total = inp + output
    put(row, Col.TOTAL_TPUT, total)
    put(row, Col.OUTPUT_TPUT, output)
    if inp is not None:
        put(row, Col.INPUT_TPUT, inp)
    elif total is not None and output is not None:
        put(row, Col.INPUT_TPUT, total - output)
    pre, dec, gpus = facts.prefill_gpus, facts.decode_gpus, facts.gpus
    if pre is None or dec is None or not gpus or row.get(Col.NUM_GPUS.value) != gpus:
        return
    # InferenceX multinode: output per decode GPU, input per prefill GPU (formats.md 2.3).
    put(row, Col.TPUT_PER_GPU, None if total is None else total / gpus)
    put(row, Col.OUTPUT_TPUT_PER_GPU, None if output is None else output / (dec or gpus))
    if total is not None and output is not None and pre:
        put(row, Col.INPUT_TPUT_PER_GPU, (total - output) / pre)


def _rate(f: Fields) -> float | None:
    """`request_rate`: a number of requests per second, or "inf" (every request at once)."""
    value = f.obj.get("request_rate")
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in {"inf", "infinity"}:
        return math.inf
    if isinstance(value, float) and value == math.inf:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise f.error("request_rate", f"expected requests per second or 'inf', got {value!r:.60}")
    rate = f.num("request_rate")
    if rate is None or not rate > 0:
        raise f.error("request_rate", f"expected a positive request rate or 'inf', got {value!r}")
    return rate


def _load(f: Fields, row: Row, facts: NameFacts) -> None:
    """The load coordinate: concurrency when capped, the request rate when it is finite or alone."""
    conc = f.pos_int("max_concurrency")
    if conc is None:
        conc = facts.conc
    put(row, Col.CONC, conc)
    rate = _rate(f)
    if rate is not None and (math.isfinite(rate) or conc is None):
        put(row, Col.REQUEST_RATE, rate)
    ramp = f.str_("ramp_up_strategy") if f.has("ramp_up_strategy") else None
    if ramp:
        warn(
            row,
            f"request rate ramped {ramp} from {f.obj.get('ramp_up_start_rps')} to "
            f"{f.obj.get('ramp_up_end_rps')} req/s; request_rate describes no single load",
        )


# Keys vLLM itself writes into the result (2024 to today); everything else came from --metadata
# (or from a sweep tool that merged its parameters in) and is kept in the metadata column.
