"""Reader for the older flat agentic aggregates (pre-aiperf kv-cache-tester trace replay).

Found in InferenceX history under `experimental/multiturn/.../pareto_input/bmk_agentic_*`: one flat
object with `users` (the concurrency), `offload_mode` on/off, `{mean,median,p90,p99,p99.9}` of
`qps`, `ttft`, `ttlt` (time to last token, i.e. end-to-end latency) and `itl` in seconds, and
per-GPU throughput. Its `itl` is the per-request decode latency (the run's summary.csv calls the
same numbers TPOT), so it fills both the itl and tpot columns, and interactivity is 1 / pXX ITL
unless the row carries its own `*_intvty`, which in these ledgers is the pXX of per-request 1/ITL
(the fast tail, formats.md 0.4).
"""

from __future__ import annotations

from typing import Any

from ingest.readers._common import Fields, put, read_identity, read_topology, warn
from ingest.readers._names import parse_name
from ingest.readers.base import ReadResult, Row, SourceFile
from ingest.schema import Col

AGENTIC = "agentic-coding"
_STATS = ("mean", "median", "p90", "p99", "p99.9")
_OFFLOAD = {"on": "dram", "off": "none"}


def is_agentic_flat(doc: Any) -> bool:
    """An older flat agentic row: `users` or `offload_mode`, and no nested request_metrics."""
    return (
        isinstance(doc, dict)
        and "hw" in doc
        and ("users" in doc or "offload_mode" in doc)
        and "request_metrics" not in doc
        and doc.get("scenario_type", AGENTIC) == AGENTIC
    )


def _latencies(f: Fields, row: Row) -> None:
    carried = [stat for stat in _STATS if f.has(f"{stat}_intvty")]
    for stat in _STATS:
        put(row, Col(f"{stat}_ttft"), f.num(f"{stat}_ttft"))
        put(row, Col(f"{stat}_e2el"), f.num(f"{stat}_ttlt"))
        itl = f.num(f"{stat}_itl")
        put(row, Col(f"{stat}_itl"), itl)
        if not carried:
            put(row, Col(f"{stat}_tpot"), itl)
            if itl is not None and itl > 0:
                put(row, Col(f"{stat}_intvty"), 1.0 / itl)
    if not carried:
        put(row, Col.INTVTY_DEFINITION, "inv_itl_percentile")
        return
    # tpot stays empty here: normalize would fill the missing stats with 1 / tpot, mixing two
    # interactivity definitions in one row.
    for stat in carried:
        put(row, Col(f"{stat}_intvty"), f.num(f"{stat}_intvty"))
    put(row, Col.INTVTY_DEFINITION, "percentile_of_inverse")


def read_agentic_flat(src: SourceFile, doc: Any) -> Row:
    """Turn one flat agentic aggregate into a partial canonical row.

    Raises:
        ParseError: naming the field that is missing or has the wrong type.
    """
    f = Fields.top(src, doc, "a flat agentic aggregate")
    row: Row = {Col.SCHEMA_VARIANT.value: "agentic_flat", Col.SCENARIO.value: AGENTIC}
    read_identity(f, row)
    read_topology(f, row)
    put(row, Col.CONC, f.pos_int("users"))
    mode = f.str_("offload_mode")
    if mode is not None:
        if mode.lower() not in _OFFLOAD:
            raise f.error("offload_mode", f"expected 'on' or 'off', got {mode!r}")
        put(row, Col.KV_OFFLOADING, _OFFLOAD[mode.lower()])
    ok, total = f.int_("num_requests_successful"), f.int_("num_requests_total")
    if ok is not None and ok < 0:
        raise f.error("num_requests_successful", f"expected a non-negative count, got {ok}")
    put(row, Col.NUM_REQUESTS_SUCCESSFUL, ok)
    if total is not None:
        # The total counts warmup requests and the row has no error count, so storing it would
        # make normalize derive a bogus error rate (284 issued / 150 profiled is not 47% errors).
        warn(row, f"num_requests_total={total} (includes warmup) not stored: no error count")
    put(row, Col.REQUEST_THROUGHPUT, f.num("mean_qps"))
    _latencies(f, row)
    put(row, Col.MEAN_INPUT_LEN, f.num("mean_input_tokens"))
    put(row, Col.MEAN_OUTPUT_LEN, f.num("mean_output_tokens_actual"))
    put(row, Col.THEORETICAL_CACHE_HIT_RATE, f.num("theoretical_cache_hit_rate"))
    put(row, Col.GPU_PREFIX_CACHE_HIT_RATE, f.num("server_gpu_cache_hit_rate"))
    put(row, Col.EXTERNAL_PREFIX_CACHE_HIT_RATE, f.num("server_cpu_cache_hit_rate"))
    for col, key in (
        (Col.INPUT_TPUT, "input_tput_tps"),
        (Col.OUTPUT_TPUT, "output_tput_tps"),
        (Col.TOTAL_TPUT, "total_tput_tps"),
        (Col.DURATION, "duration_seconds"),
        (Col.TPUT_PER_GPU, "tput_per_gpu"),
        (Col.OUTPUT_TPUT_PER_GPU, "output_tput_per_gpu"),
        (Col.INPUT_TPUT_PER_GPU, "input_tput_per_gpu"),
    ):
        put(row, col, f.num(key))
    return row


class AgenticFlatReader:
    """Older flat agentic aggregates (`users`, `offload_mode`, `*_ttlt`)."""

    name = "agentic_flat"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return is_agentic_flat(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        row = read_agentic_flat(src, doc)
        facts = parse_name(src.rel)
        put(row, Col.RUNNER, facts.runner)
        if row.get(Col.CONC.value) is None:
            put(row, Col.CONC, facts.users or facts.conc)
        if row.get(Col.SPEC_DECODING.value) is None:
            put(row, Col.SPEC_DECODING, facts.spec)
        return ReadResult(points=[row])
