"""Readers for InferenceX AgentX (agentic-coding) aggregates.

`agentic_v3` is the nested `process_agentic_result.py` output (formats.md 3.6): single-node
`<RESULT_FILENAME>.json` and multinode `<RESULT_FILENAME>_conc<N>.json`. It is flattened the way
InferenceX-app's agentic-v3 flattener does: `p50` -> `median_*`, `throughput.per_gpu.total_tput_tps`
-> `tput_per_gpu`, server cache/KV fields -> the server columns. Its `latency.intvty` is
`1 / pXX_itl` (the slow tail), recorded as `inv_itl_percentile`.

`agentic_flat` is the older flat kv-cache-tester aggregate (`users`, `offload_mode`, `*_ttlt`) in
`agentic_agg/dsr1_b200_multiturn_pareto_input`; see `ingest.readers.agentic_flat`.
"""

from __future__ import annotations

from typing import Any

from ingest.contract.col import Col
from ingest.readers._common import (
    Fields,
    put,
    read_identity,
    read_power,
    read_topology,
    read_warnings,
    warn,
)
from ingest.readers._names import parse_name
from ingest.readers.agentic_flat import AgenticFlatReader
from ingest.readers.base import ReadResult, Row, SourceFile

AGENTIC = "agentic-coding"
# aiperf stat-block keys -> canonical stat names (InferenceX-app: p50 -> median).
_STAT_KEYS = {
    "mean": "mean",
    "p50": "median",
    "p75": "p75",
    "p90": "p90",
    "p95": "p95",
    "p99": "p99",
    "p99.9": "p99.9",
}
_LATENCIES = ("ttft", "e2el", "itl", "tpot", "intvty")


def is_agentic_v3(doc: Any) -> bool:
    """A nested AgentX aggregate: a `request_metrics` object and no foreign scenario."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("request_metrics"), dict)
        and "hw" in doc
        and doc.get("scenario_type", AGENTIC) == AGENTIC
    )


def _stat_block(block: Fields | None, prefix: str, row: Row) -> bool:
    if block is None:
        return False
    found = False
    for key, stat in _STAT_KEYS.items():
        value = block.num(key)
        if value is not None:
            put(row, Col(f"{stat}_{prefix}"), value)
            found = True
    return found


def _request_metrics(rm: Fields, row: Row) -> None:
    latency = rm.sub("latency")
    if latency is not None:
        for lat in _LATENCIES:
            _stat_block(latency.sub(lat), lat, row)
        e2e_norm = latency.sub("e2e_norm_intvty")
        if e2e_norm is not None:
            put(row, Col.MEDIAN_E2E_NORM_INTVTY, e2e_norm.num("p50"))
            put(row, Col.P90_E2E_NORM_INTVTY, e2e_norm.num("p90"))
    if row.get(Col.MEDIAN_INTVTY.value) is None and row.get(Col.MEDIAN_ITL.value):
        # An empty intvty block: rebuild it the way the v3 aggregator defines it, 1 / pXX ITL.
        for stat in _STAT_KEYS.values():
            itl = row.get(f"{stat}_itl")
            if isinstance(itl, float) and itl > 0:
                put(row, Col(f"{stat}_intvty"), 1.0 / itl)
    put(row, Col.INTVTY_DEFINITION, "inv_itl_percentile")
    qps = rm.sub("qps")
    put(row, Col.REQUEST_THROUGHPUT, None if qps is None else qps.num("mean"))
    tokens = rm.sub("tokens")
    if tokens is not None:
        for key, col in (("input", Col.MEAN_INPUT_LEN), ("output_actual", Col.MEAN_OUTPUT_LEN)):
            block = tokens.sub(key)
            put(row, col, None if block is None else block.num("mean"))
    tput = rm.sub("throughput")
    if tput is not None:
        for key, col in (
            ("input", Col.INPUT_TPUT),
            ("output", Col.OUTPUT_TPUT),
            ("total", Col.TOTAL_TPUT),
        ):
            block = tput.sub(key)
            put(row, col, None if block is None else block.num("tokens_per_second"))
        put(row, Col.DURATION, tput.num("duration_seconds"))
        per_gpu = tput.sub("per_gpu")
        if per_gpu is not None:
            put(row, Col.TPUT_PER_GPU, per_gpu.num("total_tput_tps"))
            put(row, Col.OUTPUT_TPUT_PER_GPU, per_gpu.num("output_tput_tps"))
            put(row, Col.INPUT_TPUT_PER_GPU, per_gpu.num("input_tput_tps"))
    cache = rm.sub("cache")
    if cache is not None:
        put(row, Col.THEORETICAL_CACHE_HIT_RATE, cache.num("theoretical_cache_hit_rate"))


def _server_metrics(sm: Fields, row: Row) -> None:
    if sm.obj.get("present") is False:
        warn(row, "server_metrics not present in the aggregate")
        return
    cache = sm.sub("cache")
    if cache is not None:
        put(row, Col.GPU_PREFIX_CACHE_HIT_RATE, cache.num("gpu_cache_hit_rate"))
        external = cache.num("external_cache_hit_rate")
        put(row, Col.EXTERNAL_PREFIX_CACHE_HIT_RATE, external or cache.num("cpu_cache_hit_rate"))
        put(row, Col.OVERALL_PREFIX_CACHE_HIT_RATE, cache.num("overall_cache_hit_rate"))
    kv = sm.sub("kv_cache")
    if kv is not None:
        # The aggregator keeps the gauge maximum across series: a peak, already in 0..1.
        put(row, Col.PEAK_GPU_KV_USAGE, kv.num("gpu_usage_pct"))
        put(row, Col.PEAK_CPU_KV_USAGE, kv.num("cpu_usage_pct"))
        put(row, Col.KV_CACHE_POOL_TOKENS, kv.int_("gpu_total_tokens"))


def _offload(f: Fields, row: Row) -> None:
    put(row, Col.KV_OFFLOADING, f.str_("kv_offloading"))
    put(row, Col.ALLOCATED_CPU_DRAM_GB, f.num("allocated_cpu_dram_gb"))
    backend = f.obj.get("kv_offload_backend")
    if isinstance(backend, dict):
        b = Fields(f.rel, backend, "kv_offload_backend")
        put(row, Col.KV_OFFLOAD_BACKEND, b.str_("name") or None)
        put(row, Col.KV_OFFLOAD_BACKEND_VERSION, b.str_("version") or None)
    else:  # older v3 rows write the bare name, or "" for none
        put(row, Col.KV_OFFLOAD_BACKEND, f.str_("kv_offload_backend") or None)


def _requests(f: Fields, row: Row) -> None:
    total = f.int_("num_requests_total")
    ok = f.int_("num_requests_successful")
    for key, value in (("num_requests_total", total), ("num_requests_successful", ok)):
        if value is not None and value < 0:
            raise f.error(key, f"expected a non-negative request count, got {value}")
    put(row, Col.NUM_REQUESTS_SUCCESSFUL, ok)
    if ok == 0:
        warn(row, "num_requests_successful is 0 (InferenceX-app drops such rows)")
    acct = f.sub("request_accounting")
    errors = None if acct is None else acct.int_("records_error_dropped")
    # num_requests_total counts warm-up records too: stored as the file says (the hover shows
    # 43/47 and the 4 not profiled); normalize never derives an error rate for agentic rows.
    put(row, Col.NUM_REQUESTS_TOTAL, total)
    if acct is None or errors is None or not total:
        # without the accounting block failures cannot be told apart from warm-up drops
        return
    if not 0 <= errors <= total:
        raise acct.error("records_error_dropped", f"expected 0..{total} failed records")
    put(row, Col.ERROR_RATE, errors / total)
    categories = acct.sub("error_categories")
    if errors and categories is not None and categories.obj:
        counts = ", ".join(f"{k}={categories.int_(k)}" for k in sorted(categories.obj))
        warn(row, f"{errors} failed request(s): {counts}")


def read_agentic_v3(src: SourceFile, doc: Any) -> Row:
    """Flatten one nested AgentX aggregate into a partial canonical row.

    Raises:
        ParseError: naming the field that is missing or has the wrong type.
    """
    f = Fields.top(src, doc, "an AgentX v3 aggregate")
    row: Row = {Col.SCHEMA_VARIANT.value: "agentic_v3", Col.SCENARIO.value: AGENTIC}
    read_identity(f, row)
    read_topology(f, row)
    _offload(f, row)
    _requests(f, row)
    rm = f.sub("request_metrics", required=True)
    assert rm is not None
    _request_metrics(rm, row)
    sm = f.sub("server_metrics")
    if sm is not None:
        _server_metrics(sm, row)
    if f.has("kv_cache_pool_tokens"):
        put(row, Col.KV_CACHE_POOL_TOKENS, f.int_("kv_cache_pool_tokens"))
    read_power(f, row)
    read_warnings(f, row)
    return row


class AgenticV3Reader:
    """Nested AgentX aggregates (`bmk_agentic_*`), single-node and multinode `_conc<N>`."""

    name = "agentic_v3"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return is_agentic_v3(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        row = read_agentic_v3(src, doc)
        facts = parse_name(src.rel)
        put(row, Col.RUNNER, facts.runner)
        if row.get(Col.CONC.value) is None:
            put(row, Col.CONC, facts.conc)
        return ReadResult(points=[row])


FILE_READERS = (AgenticV3Reader(), AgenticFlatReader())
