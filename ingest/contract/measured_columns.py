"""The measured columns of the points table: throughputs, costs, latencies, interactivity,
request counts, speculative-decoding and server measurements, then what is derived last.

Part of the data contract (`ingest.contract.schema`); `ingest.contract.columns` puts them after the configuration
columns.
"""

from __future__ import annotations

import pyarrow as pa

from ingest.contract.col import LATENCIES, STATS, Col, ColumnSpec
from ingest.contract.derived import BUILT_IN_SPECS

# The derived metrics' columns are declared with their formulas (`ingest.contract.derived`).
DERIVED = BUILT_IN_SPECS

_S = pa.string()
_I = pa.int64()
_F = pa.float64()
_B = pa.bool_()

_STAT_WORDS = {
    "mean": "mean",
    "median": "median",
    "p75": "75th percentile",
    "p90": "90th percentile",
    "p95": "95th percentile",
    "p99": "99th percentile",
    "p99.9": "99.9th percentile",
}
_LATENCY_WORDS = {
    "ttft": "time to first token",
    "tpot": "time per output token after the first, per request ((e2el - ttft) / (osl - 1))",
    "itl": "inter-token (inter-chunk for bench_serving) latency",
    "e2el": "end-to-end request latency",
}


def _latency_specs() -> list[ColumnSpec]:
    out = []
    for lat in LATENCIES:
        for stat in STATS:
            out.append(
                ColumnSpec(
                    Col(f"{stat}_{lat}"),
                    _F,
                    "s",
                    f"{_STAT_WORDS[stat]} {_LATENCY_WORDS[lat]}",
                    "lower",
                    "latency",
                )
            )
    for stat in STATS:
        out.append(
            ColumnSpec(
                Col(f"{stat}_intvty"),
                _F,
                "tok/s/user",
                f"interactivity at the {_STAT_WORDS[stat]}; see intvty_definition for how it was "
                "derived (for percentiles, the slow tail: p99 is the worst user)",
                "higher",
                "interactivity",
            )
        )
    return out


# The cost classes of the $/Mtok columns: column suffix -> what the $/GPU-hour figure is.
COST_CLASSES: dict[str, str] = {
    "hyperscaler": "owning, hyperscaler TCO",
    "neocloud": "owning, neocloud-giant TCO",
    "rental3y": "3-year rental",
}
# Token kinds of the cost and energy columns: suffix (prefix for tok/s/MW) -> (tokens, T).
_TOKEN_KINDS: dict[str, tuple[str, str]] = {
    "": ("total (input + output)", "tput_per_gpu (total_tput / num_gpus)"),
    "input": (
        "input",
        "input_tput / num_gpus (input_tput_per_gpu, except on a disaggregated point, whose "
        "stored rate is per prefill GPU)",
    ),
    "output": (
        "output",
        "output_tput / num_gpus (output_tput_per_gpu, except on a disaggregated point, whose "
        "stored rate is per decode GPU)",
    ),
}
_COST_NOTE = (
    "; num_gpus counts prefill + decode GPUs. Null at ingest and for hardware without figures; "
    "filled at view time by analysis.cost (data/hardware.yaml, hwcost overrides)"
)


def _cost_specs() -> list[ColumnSpec]:
    out = []
    power = "P = all-in provisioned utility kW per GPU (power_kw, SemiAnalysis Datacenter model)"
    for kind, (tokens, t) in _TOKEN_KINDS.items():
        pre = f"{kind}_" if kind else ""
        out.append(
            ColumnSpec(
                Col(f"{pre}tput_per_mw"),
                _F,
                "tok/s/MW",
                f"{tokens} tokens per second per MW of all-in utility power: T * 1000 / P, "
                f"T = {t}, {power}{_COST_NOTE}",
                "higher",
                "cost",
            )
        )
    for kind, (tokens, t) in _TOKEN_KINDS.items():
        suf = f"_{kind}" if kind else ""
        out.append(
            ColumnSpec(
                Col(f"joules_per_token{suf}"),
                _F,
                "J/tok",
                f"all-in provisioned joules per {tokens} token: P * 1000 / T, T = {t}, "
                f"{power}{_COST_NOTE}",
                "lower",
                "cost",
            )
        )
    for klass, what in COST_CLASSES.items():
        for kind, (tokens, t) in _TOKEN_KINDS.items():
            suf = f"_{kind}" if kind else ""
            out.append(
                ColumnSpec(
                    Col(f"cost_per_mtok_{klass}{suf}"),
                    _F,
                    "$/Mtok",
                    f"dollars per million {tokens} tokens at the {what} cost of a GPU-hour "
                    f"(usd_per_gpu_hour.{klass}, SemiAnalysis AI Cloud TCO model): "
                    f"$/GPU-h / (T * 3600 / 1e6), T = {t}{_COST_NOTE}",
                    "lower",
                    "cost",
                )
            )
    return out


MEASURED_COLUMNS: tuple[ColumnSpec, ...] = (
    ColumnSpec(
        Col.TPUT_PER_GPU,
        _F,
        "tok/s/GPU",
        "total (input + output) token throughput per GPU",
        "higher",
        "throughput",
    ),
    ColumnSpec(
        Col.OUTPUT_TPUT_PER_GPU,
        _F,
        "tok/s/GPU",
        "output token throughput per GPU",
        "higher",
        "throughput",
    ),
    ColumnSpec(
        Col.INPUT_TPUT_PER_GPU,
        _F,
        "tok/s/GPU",
        "input token throughput per GPU",
        "higher",
        "throughput",
    ),
    ColumnSpec(Col.TOTAL_TPUT, _F, "tok/s", "total token throughput", "higher", "throughput"),
    ColumnSpec(Col.OUTPUT_TPUT, _F, "tok/s", "output token throughput", "higher", "throughput"),
    ColumnSpec(Col.INPUT_TPUT, _F, "tok/s", "input token throughput", "higher", "throughput"),
    ColumnSpec(
        Col.REQUEST_THROUGHPUT, _F, "req/s", "completed requests per second", "higher", "throughput"
    ),
    *_cost_specs(),
    *_latency_specs(),
    ColumnSpec(
        Col.MEDIAN_E2E_NORM_INTVTY,
        _F,
        "tok/s/user",
        "median of output tokens over end-to-end latency (TTFT included)",
        "higher",
        "interactivity",
    ),
    ColumnSpec(
        Col.P90_E2E_NORM_INTVTY,
        _F,
        "tok/s/user",
        "90th percentile (slow tail) of output tokens over end-to-end latency",
        "higher",
        "interactivity",
    ),
    ColumnSpec(
        Col.INTVTY_DEFINITION,
        _S,
        "",
        "how *_intvty was derived: inv_tpot_percentile (1/pXX TPOT, fixed-seq), inv_itl_percentile (1/pXX aiperf ITL, AgentX v3), percentile_of_inverse (pXX of per-request 1/ITL, older agentic rows)",
        None,
        "interactivity",
    ),
    ColumnSpec(
        Col.NUM_REQUESTS_TOTAL,
        _I,
        "requests",
        "requests issued (bench_serving: num_prompts)",
        None,
        "requests",
    ),
    ColumnSpec(
        Col.NUM_REQUESTS_SUCCESSFUL,
        _I,
        "requests",
        "requests that completed successfully and were profiled",
        "higher",
        "requests",
    ),
    DERIVED[Col.ERROR_RATE],
    ColumnSpec(Col.DURATION, _F, "s", "benchmark duration", None, "requests"),
    ColumnSpec(
        Col.TOTAL_INPUT_TOKENS,
        _I,
        "tokens",
        "input tokens over successful requests",
        None,
        "requests",
    ),
    ColumnSpec(
        Col.TOTAL_OUTPUT_TOKENS,
        _I,
        "tokens",
        "output tokens over successful requests",
        None,
        "requests",
    ),
    ColumnSpec(
        Col.MEAN_INPUT_LEN, _F, "tokens", "mean actual input length per request", None, "requests"
    ),
    ColumnSpec(
        Col.MEAN_OUTPUT_LEN, _F, "tokens", "mean actual output length per request", None, "requests"
    ),
    ColumnSpec(
        Col.SPEC_DRAFTS,
        _F,
        "steps",
        "speculative drafting steps (vllm:spec_decode_num_drafts delta)",
        None,
        "spec_measured",
    ),
    ColumnSpec(
        Col.SPEC_DRAFT_TOKENS,
        _F,
        "tokens",
        "draft tokens proposed (vllm:spec_decode_num_draft_tokens delta)",
        None,
        "spec_measured",
    ),
    ColumnSpec(
        Col.SPEC_ACCEPTED_TOKENS,
        _F,
        "tokens",
        "draft tokens accepted (vllm:spec_decode_num_accepted_tokens delta)",
        None,
        "spec_measured",
    ),
    DERIVED[Col.AL_MEASURED],
    DERIVED[Col.DRAFT_ACCEPTANCE_RATE],
    ColumnSpec(
        Col.ACCEPT_RATE_PER_POS,
        pa.list_(_F),
        "fraction",
        "acceptance rate at each draft position (accepted_per_pos / drafts)",
        None,
        "spec_measured",
    ),
    ColumnSpec(
        Col.AL_SOURCE,
        _S,
        "",
        "where al_measured came from: bench_json, aiperf_server_metrics, prometheus_delta, prometheus_snapshot, server_log, bench_console",
        None,
        "spec_measured",
    ),
    ColumnSpec(
        Col.GPU_PREFIX_CACHE_HIT_RATE,
        _F,
        "fraction",
        "InferenceX's gpu_cache_hit_rate (server_gpu_cache_hit_rate), as their vLLM adapter "
        "computes it over the profiling window: Σvllm:prefix_cache_hits / "
        "Σvllm:prefix_cache_queries, replaced by local_cache_hit / Σ "
        "vllm:prompt_tokens_by_source when the server exports that counter; from an InferenceX "
        "aggregate, its published value",
        "higher",
        "server",
    ),
    ColumnSpec(
        Col.EXTERNAL_PREFIX_CACHE_HIT_RATE,
        _F,
        "fraction",
        "external/CPU (offload) prefix-cache hit rate",
        "higher",
        "server",
    ),
    ColumnSpec(
        Col.OVERALL_PREFIX_CACHE_HIT_RATE,
        _F,
        "fraction",
        "combined prefix-cache hit rate",
        "higher",
        "server",
    ),
    ColumnSpec(
        Col.PREFIX_CACHE_HIT_RATE,
        _F,
        "fraction",
        "Σvllm:prefix_cache_hits / Σvllm:prefix_cache_queries (tokens; summed over engines and "
        "servers), never replaced by the by-source counter: InferenceX's per-source "
        "prefix_cache_hit_rate, summed; over the profiling window (aiperf export, scrape pair) "
        "or since server start (one scrape)",
        "higher",
        "server",
    ),
    ColumnSpec(
        Col.GPU_PREFIX_CACHE_HIT_RATE_GAUGE,
        _F,
        "fraction",
        "the vLLM V0 gauge vllm:gpu_prefix_cache_hit_rate as scraped (vLLM's own block-level "
        "rate at scrape time, largest over series): not InferenceX's definition",
        "higher",
        "server",
    ),
    ColumnSpec(
        Col.THEORETICAL_CACHE_HIT_RATE,
        _F,
        "fraction",
        "theoretical prefix-cache hit rate of the trace",
        None,
        "server",
    ),
    ColumnSpec(
        Col.PEAK_GPU_KV_USAGE, _F, "fraction", "peak GPU KV-cache usage (0..1)", None, "server"
    ),
    ColumnSpec(
        Col.PEAK_CPU_KV_USAGE, _F, "fraction", "peak CPU KV-cache usage (0..1)", None, "server"
    ),
    ColumnSpec(Col.KV_CACHE_POOL_TOKENS, _I, "tokens", "GPU KV-cache pool size", None, "server"),
    ColumnSpec(
        Col.NUM_PREEMPTIONS, _F, "requests", "preemptions over the benchmark", "lower", "server"
    ),
    ColumnSpec(
        Col.AVG_POWER_W, _F, "W", "average GPU power over the benchmark window", None, "server"
    ),
    ColumnSpec(
        Col.MEASURED_ENERGY_J,
        _F,
        "J",
        "GPU-board energy over the benchmark window, all GPUs, from the point's gpu_metrics "
        "telemetry (per-GPU trapezoid, linear at the window's ends)",
        None,
        "server",
    ),
    ColumnSpec(
        Col.MEASURED_POWER_W,
        _F,
        "W",
        "measured GPU-board power, all GPUs together, over the benchmark window "
        "(measured_energy_j / window length)",
        None,
        "server",
    ),
    ColumnSpec(
        Col.MEASURED_JOULES_PER_TOKEN,
        _F,
        "J/token",
        "measured GPU-board energy per input+output token (measured_energy_j / "
        "(total_input_tokens + total_output_tokens)); compare joules_per_token, modelled from "
        "hardware.yaml",
        "lower",
        "server",
    ),
    ColumnSpec(
        Col.SERVER_FLAGS,
        _S,
        "",
        "server command-line flags as a JSON object (from vllm_command.txt), for confound listing",
        None,
        "config",
    ),
    ColumnSpec(
        Col.METADATA,
        _S,
        "",
        "what the result file says about the point beyond the canonical columns, as a JSON "
        "object: vLLM --metadata key=value pairs, bench sweep parameters, individual repeat runs",
        None,
        "config",
    ),
    ColumnSpec(
        Col.WARNINGS,
        pa.list_(_S),
        "",
        "data-quality notes about the row (kept, not dropped)",
        None,
        "config",
    ),
    ColumnSpec(
        Col.ARM_ID,
        _S,
        "",
        "stable hash of the configuration identity without conc (and without run_id)",
        None,
        "arm",
    ),
    ColumnSpec(
        Col.ARM_LABEL,
        _S,
        "",
        "readable arm label, e.g. 'TP8 EP1 | MTP K=3 | kv dram/mooncake'",
        None,
        "arm",
    ),
    ColumnSpec(
        Col.INGESTED_AT, pa.timestamp("us", tz="UTC"), "", "when the row was stored", None, "arm"
    ),
)
