"""Reader for the flat agentic aggregates (everything before the nested v1.0 rows of 2026-07-02).

Two generations share this reader; renamed keys resolve through `_names.FIELD_ALIASES`:

* kv-cache-tester rows (`experimental/multiturn/.../pareto_input/bmk_agentic_*`): `users` (the
  concurrency), `offload_mode` on/off, `{mean,median,p90,p99,p99.9}` of `qps`, `ttft`, `ttlt`
  (time to last token, i.e. end-to-end latency) and `itl` in seconds.
* `utils/process_agentic_result.py` v0.1-v0.3 (2026-05-01 .. 2026-07-02): `conc`, `offloading`
  (none/cpu/dram/...), `scenario_type: agentic-coding`, `{mean,median,p90,p99,p99.9,std}` (v0.1) or
  `{mean,p75,p90,p95,std}` (v0.2 aiperf, v0.3) of `qps`, `ttft`, `e2el`, `itl`, `tpot`, `intvty`.

Both carry per-GPU throughput (`tput_per_gpu`, total tokens / duration / GPUs). Its `itl` is the per-request decode latency (the run's summary.csv calls the
same numbers TPOT), so it fills both the itl and tpot columns, and interactivity is 1 / pXX ITL
unless the row carries its own `*_intvty`, which in these ledgers is the pXX of per-request 1/ITL
(the fast tail, formats.md 0.4).
"""

from __future__ import annotations

from typing import Any

from ingest.contract.col import STATS, Col
from ingest.errors import ParseError
from ingest.readers._common import Fields, put, read_identity, read_topology
from ingest.readers._names import FIELD_ALIASES, alias_key, missing_key_reason, parse_name
from ingest.readers.base import ReadResult, Row, SourceFile

AGENTIC = "agentic-coding"
READER = "agentic_flat"
_STATS = STATS
# offload_mode on/off (kv-cache-tester); `offloading`/`kv_offloading` already name the tier.
_OFFLOAD = {"on": "dram", "off": "none"}


def is_agentic_flat(doc: Any) -> bool:
    """A flat agentic row: agentic identity at the top level and no nested request_metrics."""
    if not isinstance(doc, dict) or "hw" not in doc or "request_metrics" in doc:
        return False
    scenario = doc.get("scenario_type")
    if scenario is not None and scenario != AGENTIC:
        return False
    if "users" in doc or "offload_mode" in doc:
        return True
    # process_agentic_result.py v0.x: explicit scenario, no isl/osl.
    return scenario == AGENTIC and "isl" not in doc


def _stat_key(f: Fields, stat: str, metric: str) -> str:
    """`<stat>_<metric>` under whichever alias of the stat and the metric the row carries."""
    for s in FIELD_ALIASES.get(stat, (stat,)):
        for m in FIELD_ALIASES.get(metric, (metric,)):
            if f.has(f"{s}_{m}"):
                return f"{s}_{m}"
    return f"{stat}_{metric}"


def _latencies(f: Fields, row: Row) -> None:
    carried = [stat for stat in _STATS if f.has(_stat_key(f, stat, "intvty"))]
    for stat in _STATS:
        put(row, Col(f"{stat}_ttft"), f.num(_stat_key(f, stat, "ttft")))
        put(row, Col(f"{stat}_e2el"), f.num(_stat_key(f, stat, "e2el")))
        itl = f.num(_stat_key(f, stat, "itl"))
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
        put(row, Col(f"{stat}_intvty"), f.num(_stat_key(f, stat, "intvty")))
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
    conc_key = alias_key(doc, "conc")
    if conc_key is None and parse_name(src.rel).conc is None:
        raise ParseError(src.rel, "conc", missing_key_reason(READER, "conc", doc))
    if conc_key is not None:
        put(row, Col.CONC, f.pos_int(conc_key))
    mode_key = alias_key(doc, "kv_offloading")
    mode = None if mode_key is None else f.str_(mode_key)
    if mode is not None and mode_key == "offload_mode":
        if mode.lower() not in _OFFLOAD:
            raise f.error("offload_mode", f"expected 'on' or 'off', got {mode!r}")
        put(row, Col.KV_OFFLOADING, _OFFLOAD[mode.lower()])
    elif mode:
        put(row, Col.KV_OFFLOADING, mode.lower())
    if alias_key(doc, "tput_per_gpu") is None:
        raise ParseError(src.rel, "tput_per_gpu", missing_key_reason(READER, "tput_per_gpu", doc))
    ok, total = f.int_("num_requests_successful"), f.int_("num_requests_total")
    if ok is not None and ok < 0:
        raise f.error("num_requests_successful", f"expected a non-negative count, got {ok}")
    put(row, Col.NUM_REQUESTS_SUCCESSFUL, ok)
    # The total counts warm-up requests and the row has no error count: it is stored as the
    # file says (the hover shows 150/284 and the 134 not profiled), and no error rate is
    # derived from it (normalize never derives one for agentic rows: 284 issued / 150
    # successful is not 47% errors).
    if total is not None and total < 0:
        raise f.error("num_requests_total", f"expected a non-negative count, got {total}")
    put(row, Col.NUM_REQUESTS_TOTAL, total)
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

    name = READER

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
