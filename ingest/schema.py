"""The data contract: every canonical column, its Arrow type, unit, meaning and better direction.

Column names follow the InferenceX aggregate field names wherever one exists (`tput_per_gpu`,
`median_intvty`, `p99_ttft` in seconds, `conc`, `tp`, `ep`, `spec_decoding`). Everything else in
paretolens refers to columns through :class:`Col`, never through bare strings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

import polars as pl
import pyarrow as pa

Better = Literal["higher", "lower"]

STATS = ("mean", "median", "p75", "p90", "p95", "p99", "p99.9")
LATENCIES = ("ttft", "tpot", "itl", "e2el")


class Col(StrEnum):
    """Canonical column names of the `points` table."""

    # identity
    POINT_ID = "point_id"
    RUN_ID = "run_id"
    RUN_ATTEMPT = "run_attempt"
    SOURCE_PATH = "source_path"
    SOURCE_SHA256 = "source_sha256"
    ARTIFACT = "artifact"
    SCHEMA_VARIANT = "schema_variant"
    SCENARIO = "scenario"
    MODEL = "model"
    MODEL_PREFIX = "model_prefix"
    HW = "hw"
    HW_LABEL = "hw_label"
    RUNNER = "runner"
    FRAMEWORK = "framework"
    PRECISION = "precision"
    IMAGE = "image"
    RECIPE_FINGERPRINT = "recipe_fingerprint"
    ISL = "isl"
    OSL = "osl"
    CONC = "conc"
    REQUEST_RATE = "request_rate"
    REPEATS = "repeats"
    REPEAT_SPREAD = "repeat_tput_spread"
    # topology
    TP = "tp"
    PP = "pp"
    EP = "ep"
    DP_ATTENTION = "dp_attention"
    DCP_SIZE = "dcp_size"
    PCP_SIZE = "pcp_size"
    DISAGG = "disagg"
    IS_MULTINODE = "is_multinode"
    PREFILL_TP = "prefill_tp"
    PREFILL_EP = "prefill_ep"
    PREFILL_DP_ATTENTION = "prefill_dp_attention"
    PREFILL_NUM_WORKERS = "prefill_num_workers"
    PREFILL_GPUS = "num_prefill_gpu"
    DECODE_TP = "decode_tp"
    DECODE_EP = "decode_ep"
    DECODE_DP_ATTENTION = "decode_dp_attention"
    DECODE_NUM_WORKERS = "decode_num_workers"
    DECODE_GPUS = "num_decode_gpu"
    NUM_GPUS = "num_gpus"
    # speculative decoding configuration
    SPEC_DECODING = "spec_decoding"
    SPEC_METHOD = "spec_method"
    DRAFT_MODEL = "draft_model"
    NUM_SPEC_TOKENS = "num_spec_tokens"
    SYNTHETIC_ACCEPTANCE = "synthetic_acceptance"
    SYNTHETIC_AL = "synthetic_al"
    THINKING_MODE = "thinking_mode"
    # KV offload
    KV_OFFLOADING = "kv_offloading"
    KV_OFFLOAD_BACKEND = "kv_offload_backend"
    KV_OFFLOAD_BACKEND_VERSION = "kv_offload_backend_version"
    ALLOCATED_CPU_DRAM_GB = "allocated_cpu_dram_gb"
    # throughput
    TPUT_PER_GPU = "tput_per_gpu"
    OUTPUT_TPUT_PER_GPU = "output_tput_per_gpu"
    INPUT_TPUT_PER_GPU = "input_tput_per_gpu"
    TOTAL_TPUT = "total_tput"
    OUTPUT_TPUT = "output_tput"
    INPUT_TPUT = "input_tput"
    REQUEST_THROUGHPUT = "request_throughput"
    # cost and energy per token (null at ingest; filled by analysis.cost at view time)
    TPUT_PER_MW = "tput_per_mw"
    INPUT_TPUT_PER_MW = "input_tput_per_mw"
    OUTPUT_TPUT_PER_MW = "output_tput_per_mw"
    JOULES_PER_TOKEN = "joules_per_token"
    JOULES_PER_TOKEN_INPUT = "joules_per_token_input"
    JOULES_PER_TOKEN_OUTPUT = "joules_per_token_output"
    COST_PER_MTOK_HYPERSCALER = "cost_per_mtok_hyperscaler"
    COST_PER_MTOK_HYPERSCALER_INPUT = "cost_per_mtok_hyperscaler_input"
    COST_PER_MTOK_HYPERSCALER_OUTPUT = "cost_per_mtok_hyperscaler_output"
    COST_PER_MTOK_NEOCLOUD = "cost_per_mtok_neocloud"
    COST_PER_MTOK_NEOCLOUD_INPUT = "cost_per_mtok_neocloud_input"
    COST_PER_MTOK_NEOCLOUD_OUTPUT = "cost_per_mtok_neocloud_output"
    COST_PER_MTOK_RENTAL3Y = "cost_per_mtok_rental3y"
    COST_PER_MTOK_RENTAL3Y_INPUT = "cost_per_mtok_rental3y_input"
    COST_PER_MTOK_RENTAL3Y_OUTPUT = "cost_per_mtok_rental3y_output"
    # latency percentiles (seconds) and interactivity (tok/s/user)
    MEAN_TTFT = "mean_ttft"
    MEDIAN_TTFT = "median_ttft"
    P75_TTFT = "p75_ttft"
    P90_TTFT = "p90_ttft"
    P95_TTFT = "p95_ttft"
    P99_TTFT = "p99_ttft"
    P999_TTFT = "p99.9_ttft"
    MEAN_TPOT = "mean_tpot"
    MEDIAN_TPOT = "median_tpot"
    P75_TPOT = "p75_tpot"
    P90_TPOT = "p90_tpot"
    P95_TPOT = "p95_tpot"
    P99_TPOT = "p99_tpot"
    P999_TPOT = "p99.9_tpot"
    MEAN_ITL = "mean_itl"
    MEDIAN_ITL = "median_itl"
    P75_ITL = "p75_itl"
    P90_ITL = "p90_itl"
    P95_ITL = "p95_itl"
    P99_ITL = "p99_itl"
    P999_ITL = "p99.9_itl"
    MEAN_E2EL = "mean_e2el"
    MEDIAN_E2EL = "median_e2el"
    P75_E2EL = "p75_e2el"
    P90_E2EL = "p90_e2el"
    P95_E2EL = "p95_e2el"
    P99_E2EL = "p99_e2el"
    P999_E2EL = "p99.9_e2el"
    MEAN_INTVTY = "mean_intvty"
    MEDIAN_INTVTY = "median_intvty"
    P75_INTVTY = "p75_intvty"
    P90_INTVTY = "p90_intvty"
    P95_INTVTY = "p95_intvty"
    P99_INTVTY = "p99_intvty"
    P999_INTVTY = "p99.9_intvty"
    MEDIAN_E2E_NORM_INTVTY = "median_e2e_norm_intvty"
    P90_E2E_NORM_INTVTY = "p90_e2e_norm_intvty"
    INTVTY_DEFINITION = "intvty_definition"
    # requests
    NUM_REQUESTS_TOTAL = "num_requests_total"
    NUM_REQUESTS_SUCCESSFUL = "num_requests_successful"
    ERROR_RATE = "error_rate"
    DURATION = "duration"
    TOTAL_INPUT_TOKENS = "total_input_tokens"
    TOTAL_OUTPUT_TOKENS = "total_output_tokens"
    MEAN_INPUT_LEN = "mean_input_len"
    MEAN_OUTPUT_LEN = "mean_output_len"
    # speculative-decoding measurements
    SPEC_DRAFTS = "spec_drafts"
    SPEC_DRAFT_TOKENS = "spec_draft_tokens"
    SPEC_ACCEPTED_TOKENS = "spec_accepted_tokens"
    AL_MEASURED = "al_measured"
    DRAFT_ACCEPTANCE_RATE = "draft_acceptance_rate"
    ACCEPT_RATE_PER_POS = "accept_rate_per_pos"
    AL_SOURCE = "al_source"
    # server summary
    GPU_PREFIX_CACHE_HIT_RATE = "gpu_prefix_cache_hit_rate"
    EXTERNAL_PREFIX_CACHE_HIT_RATE = "external_prefix_cache_hit_rate"
    OVERALL_PREFIX_CACHE_HIT_RATE = "overall_prefix_cache_hit_rate"
    PREFIX_CACHE_HIT_RATE = "prefix_cache_hit_rate"
    GPU_PREFIX_CACHE_HIT_RATE_GAUGE = "gpu_prefix_cache_hit_rate_gauge"
    THEORETICAL_CACHE_HIT_RATE = "theoretical_cache_hit_rate"
    PEAK_GPU_KV_USAGE = "peak_gpu_kv_usage"
    PEAK_CPU_KV_USAGE = "peak_cpu_kv_usage"
    KV_CACHE_POOL_TOKENS = "kv_cache_pool_tokens"
    NUM_PREEMPTIONS = "num_preemptions"
    AVG_POWER_W = "avg_power_w"
    # configuration detail and derived identity
    SERVER_FLAGS = "server_flags"
    METADATA = "metadata"
    WARNINGS = "warnings"
    ARM_ID = "arm_id"
    ARM_LABEL = "arm_label"
    INGESTED_AT = "ingested_at"


@dataclass(frozen=True)
class ColumnSpec:
    """One canonical column: its Arrow type, unit, meaning and which direction is better."""

    name: Col
    dtype: pa.DataType
    unit: str
    description: str
    better: Better | None = None
    group: str = ""


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


COLUMNS: tuple[ColumnSpec, ...] = (
    ColumnSpec(
        Col.POINT_ID,
        _S,
        "",
        "stable id of the point: hash of run_id, arm_id, conc, source_path (and request_rate "
        "when the point has one)",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.RUN_ID,
        _S,
        "",
        "run (sweep) id: a GitHub Actions run id or a local name",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.RUN_ATTEMPT, _I, "", "GitHub Actions run attempt (1 for local runs)", None, "identity"
    ),
    ColumnSpec(
        Col.SOURCE_PATH,
        _S,
        "",
        "path of the file the row came from, relative to the ingested root",
        None,
        "identity",
    ),
    ColumnSpec(Col.SOURCE_SHA256, _S, "", "sha256 of the source file's bytes", None, "identity"),
    ColumnSpec(
        Col.ARTIFACT,
        _S,
        "",
        "logical artifact name (retry suffix stripped) or source directory",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.SCHEMA_VARIANT,
        _S,
        "",
        "which reader/format produced the row (bench_serving_ms, bench_serving_random_s, agg_fixed_v1, agg_fixed_v2, agentic_v3, agentic_flat, aiperf, vllm_capture, together_runner, ...)",
        None,
        "identity",
    ),
    ColumnSpec(Col.SCENARIO, _S, "", "fixed-seq-len or agentic-coding", None, "identity"),
    ColumnSpec(
        Col.MODEL,
        _S,
        "",
        "model id (Hugging Face id or path) as the harness recorded it",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.MODEL_PREFIX,
        _S,
        "",
        "InferenceX model prefix (infmax_model_prefix), e.g. kimik2.5",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.HW,
        _S,
        "",
        "canonical hardware, e.g. h200 (label with everything up to the last ':' dropped, first '-' segment kept)",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.HW_LABEL,
        _S,
        "",
        "raw runner label as recorded, e.g. cluster:h200-dgxc",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.RUNNER,
        _S,
        "",
        "concrete runner name when the file name carries it, e.g. h200-dgxc-slurm_3",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.FRAMEWORK,
        _S,
        "",
        "serving framework: vllm, sglang, trt, dynamo-vllm, atom, ...",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.PRECISION, _S, "", "weight precision: fp8, fp4, int4, bf16, ...", None, "identity"
    ),
    ColumnSpec(Col.IMAGE, _S, "", "container image", None, "identity"),
    ColumnSpec(
        Col.RECIPE_FINGERPRINT,
        _S,
        "",
        "InferenceX recipe fingerprint (sha256 of the matrix row without conc)",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.ISL,
        _I,
        "tokens",
        "nominal input sequence length (null for agentic traces)",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.OSL,
        _I,
        "tokens",
        "nominal output sequence length (null for agentic traces)",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.CONC,
        _I,
        "requests",
        "client concurrency (max_concurrency; users for agentic); null when the point is "
        "identified by its request_rate instead",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.REQUEST_RATE,
        _F,
        "req/s",
        "offered request rate of a request-rate sweep (vLLM --request-rate; inf = every request "
        "at once); null when the point is identified by conc. A point's load coordinate is conc, "
        "else request_rate",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.REPEATS,
        _I,
        "runs",
        "how many repeated runs of the same configuration and load this point summarises "
        "(vLLM bench sweep run=N files; null for a single run). Its metrics are the repeats' mean",
        None,
        "identity",
    ),
    ColumnSpec(
        Col.REPEAT_SPREAD,
        _F,
        "fraction",
        "spread of total throughput across the repeats: (max - min) / mean",
        None,
        "requests",
    ),
    ColumnSpec(
        Col.TP,
        _I,
        "",
        "tensor parallel size (multinode: prefill_tp + decode_tp, as InferenceX)",
        None,
        "topology",
    ),
    ColumnSpec(Col.PP, _I, "", "pipeline parallel size", None, "topology"),
    ColumnSpec(Col.EP, _I, "", "expert parallel size", None, "topology"),
    ColumnSpec(
        Col.DP_ATTENTION,
        _B,
        "",
        "data-parallel attention enabled (InferenceX stores it as a string)",
        None,
        "topology",
    ),
    ColumnSpec(Col.DCP_SIZE, _I, "", "decode context parallel size", None, "topology"),
    ColumnSpec(Col.PCP_SIZE, _I, "", "prefill context parallel size", None, "topology"),
    ColumnSpec(Col.DISAGG, _B, "", "prefill/decode disaggregated serving", None, "topology"),
    ColumnSpec(Col.IS_MULTINODE, _B, "", "multi-node deployment", None, "topology"),
    ColumnSpec(Col.PREFILL_TP, _I, "", "prefill worker tensor parallel size", None, "topology"),
    ColumnSpec(Col.PREFILL_EP, _I, "", "prefill worker expert parallel size", None, "topology"),
    ColumnSpec(
        Col.PREFILL_DP_ATTENTION, _B, "", "prefill worker data-parallel attention", None, "topology"
    ),
    ColumnSpec(Col.PREFILL_NUM_WORKERS, _I, "", "number of prefill workers", None, "topology"),
    ColumnSpec(Col.PREFILL_GPUS, _I, "GPUs", "GPUs serving prefill", None, "topology"),
    ColumnSpec(Col.DECODE_TP, _I, "", "decode worker tensor parallel size", None, "topology"),
    ColumnSpec(Col.DECODE_EP, _I, "", "decode worker expert parallel size", None, "topology"),
    ColumnSpec(
        Col.DECODE_DP_ATTENTION, _B, "", "decode worker data-parallel attention", None, "topology"
    ),
    ColumnSpec(Col.DECODE_NUM_WORKERS, _I, "", "number of decode workers", None, "topology"),
    ColumnSpec(Col.DECODE_GPUS, _I, "GPUs", "GPUs serving decode", None, "topology"),
    ColumnSpec(
        Col.NUM_GPUS,
        _I,
        "GPUs",
        "GPUs the per-GPU throughputs divide by (tp*pp*pcp single-node; prefill+decode GPUs multinode)",
        None,
        "topology",
    ),
    ColumnSpec(
        Col.SPEC_DECODING,
        _S,
        "",
        "speculative decoding as InferenceX names it: none, mtp, draft_model, ...",
        None,
        "spec",
    ),
    ColumnSpec(
        Col.SPEC_METHOD,
        _S,
        "",
        "speculative method from the server config: eagle3, mtp, ngram, ...",
        None,
        "spec",
    ),
    ColumnSpec(Col.DRAFT_MODEL, _S, "", "draft model id", None, "spec"),
    ColumnSpec(Col.NUM_SPEC_TOKENS, _I, "tokens", "num_speculative_tokens (K)", None, "spec"),
    ColumnSpec(
        Col.SYNTHETIC_ACCEPTANCE,
        _B,
        "",
        "acceptance pinned synthetically (rejection_sample_method=synthetic)",
        None,
        "spec",
    ),
    ColumnSpec(
        Col.SYNTHETIC_AL,
        _F,
        "tokens/step",
        "pinned synthetic acceptance length (1 + sum of pinned per-position rates when given as rates)",
        None,
        "spec",
    ),
    ColumnSpec(
        Col.THINKING_MODE,
        _S,
        "",
        "thinking_on or thinking_off, from the chat-template kwargs",
        None,
        "spec",
    ),
    ColumnSpec(
        Col.KV_OFFLOADING,
        _S,
        "",
        "KV offload tier: none or dram (older runs: on/off mapped to dram/none)",
        None,
        "offload",
    ),
    ColumnSpec(
        Col.KV_OFFLOAD_BACKEND,
        _S,
        "",
        "KV offload backend name: mooncake, lmcache, native, ...",
        None,
        "offload",
    ),
    ColumnSpec(
        Col.KV_OFFLOAD_BACKEND_VERSION, _S, "", "KV offload backend version", None, "offload"
    ),
    ColumnSpec(
        Col.ALLOCATED_CPU_DRAM_GB, _F, "GB", "CPU DRAM allocated to the KV offload", None, "offload"
    ),
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
    ColumnSpec(
        Col.ERROR_RATE, _F, "fraction", "failed / issued requests (0..1)", "lower", "requests"
    ),
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
    ColumnSpec(
        Col.AL_MEASURED,
        _F,
        "tokens/step",
        "measured acceptance length = 1 + accepted / drafts",
        "higher",
        "spec_measured",
    ),
    ColumnSpec(
        Col.DRAFT_ACCEPTANCE_RATE,
        _F,
        "fraction",
        "accepted / draft tokens",
        "higher",
        "spec_measured",
    ),
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

SPECS: dict[Col, ColumnSpec] = {spec.name: spec for spec in COLUMNS}
POINTS_SCHEMA: pa.Schema = pa.schema([pa.field(s.name.value, s.dtype) for s in COLUMNS])

# The identity that defines an arm: everything about the configuration except conc and the run.
ARM_KEY: tuple[Col, ...] = (
    Col.SCENARIO,
    Col.MODEL_PREFIX,
    Col.MODEL,
    Col.HW,
    Col.FRAMEWORK,
    Col.PRECISION,
    Col.ISL,
    Col.OSL,
    Col.SPEC_DECODING,
    Col.SPEC_METHOD,
    Col.DRAFT_MODEL,
    Col.NUM_SPEC_TOKENS,
    Col.DISAGG,
    Col.IS_MULTINODE,
    Col.TP,
    Col.PP,
    Col.EP,
    Col.DP_ATTENTION,
    Col.DCP_SIZE,
    Col.PCP_SIZE,
    Col.PREFILL_TP,
    Col.PREFILL_EP,
    Col.PREFILL_DP_ATTENTION,
    Col.PREFILL_NUM_WORKERS,
    Col.DECODE_TP,
    Col.DECODE_EP,
    Col.DECODE_DP_ATTENTION,
    Col.DECODE_NUM_WORKERS,
    Col.KV_OFFLOADING,
    Col.KV_OFFLOAD_BACKEND,
)

# Default comparison group for frontiers: run x scenario x model x isl/osl x hw x precision.
# Both model columns: two models never share a frontier, whether or not a prefix was recorded.
DEFAULT_GROUP: tuple[Col, ...] = (
    Col.RUN_ID,
    Col.SCENARIO,
    Col.MODEL_PREFIX,
    Col.MODEL,
    Col.ISL,
    Col.OSL,
    Col.HW,
    Col.PRECISION,
)


# Where a point's identity comes from, most trusted first. A source fills only what the ones
# above it left unknown; where two disagree the point keeps the more trusted value and a warning
# names both.
IDENTITY_SOURCES: tuple[tuple[str, str], ...] = (
    (
        "the result file's own fields",
        "model, load (max_concurrency / request_rate / users), lengths, server_info, input_config, "
        "spec-decode counters",
    ),
    (
        "vLLM `--metadata key=value` keys in the result",
        "gpu=4xNVIDIA_L40S (num_gpus, hw), tp, num_gpus, hw; every key kept in `metadata`",
    ),
    (
        "InferenceX artifact, directory and file names",
        "model prefix, TP/EP/DP-attention, offload, precision, framework, spec, conc, hardware "
        "from the runner label; `vllm bench sweep` SERVE--/BENCH-- directory parameters",
    ),
    (
        "sidecars and the server command beside the result",
        "vllm_command.txt / sweep serve parameters: TP, EP, DP, max-num-seqs, spec config, "
        "offload connector, all flags in `server_flags`",
    ),
    (
        "the plan of a job paretolens launched",
        "hardware, image, model, topology, spec and offload settings of the plan point",
    ),
    (
        "`paretolens ingest --set COLUMN=VALUE` and a paretolens.yaml beside the files",
        "anything no file says (--set wins over paretolens.yaml; the nearest paretolens.yaml "
        "applies)",
    ),
    (
        "the measurements themselves (these overrule a label that says otherwise)",
        "spec decoding on when draft counters or an AL were measured, even if a name said "
        "spec-none ('detected', K = draft tokens / drafts, with a warning)",
    ),
)

# Server flags that say where or how a run was launched, never what was measured: they are not
# part of a configuration's identity, and never a confound (names as `server_flag_items` writes
# them: no leading dashes, underscores as dashes).
RUN_NOISE_FLAGS: frozenset[str] = frozenset(
    {
        "host",
        "port",
        "seed",
        "log-level",
        "uvicorn-log-level",
        "disable-log-requests",
        "enable-log-requests",
        "disable-log-stats",
        "disable-uvicorn-access-log",
        "log-requests",
        "log-file",
        "log-dir",
        "api-key",
        "served-model-name",
        "download-dir",
        "root-path",
        "ssl-keyfile",
        "ssl-certfile",
        "allowed-origins",
        "allowed-headers",
        "allowed-methods",
        "otlp-traces-endpoint",
        "collect-detailed-traces",
        "output-dir",
        "result-dir",
        "result-filename",
        "save-result",
        "metrics-port",
        "nccl-port",
        "dist-init-addr",
        "master-port",
        "prometheus-port",
        "trust-remote-code",
        "random-seed",
    }
)


def server_flag_items(raw: object) -> dict[str, str]:
    """A `server_flags` value as {flag name: value text}: names without leading dashes and with
    underscores as dashes, non-string values as sorted JSON. Text that is not a JSON object is
    kept whole under `<server_flags>`."""
    if not raw:
        return {}
    try:
        doc = json.loads(str(raw))
    except (json.JSONDecodeError, RecursionError):
        return {"<server_flags>": str(raw)}
    if not isinstance(doc, dict):
        return {"<server_flags>": str(raw)}
    return {
        str(k).lstrip("-").replace("_", "-"): v
        if isinstance(v, str)
        else json.dumps(v, sort_keys=True)
        for k, v in doc.items()
    }


def better(col: str) -> Better:
    """Return the better direction of a metric column.

    Raises:
        ValueError: when the column is unknown or has no direction (it is not a metric).
    """
    try:
        spec = SPECS[Col(col)]
    except ValueError as exc:
        raise ValueError(
            f"unknown column {col!r}; see docs/schema.md for the metric names"
        ) from exc
    if spec.better is None:
        raise ValueError(f"column {col!r} is not a metric with a better direction")
    return spec.better


def metric_columns() -> list[Col]:
    """Columns that have a better direction (usable as Pareto axes)."""
    return [s.name for s in COLUMNS if s.better is not None]


def unit(col: str) -> str:
    """Unit of a canonical column ('' when dimensionless)."""
    return SPECS[Col(col)].unit


def header(col: str) -> str:
    """A column header with its unit, e.g. 'p99_ttft (s)'."""
    u = unit(col)
    return f"{col} ({u})" if u else str(col)


def polars_schema() -> pl.Schema:
    """The points schema as polars dtypes."""
    return empty_points().schema


def empty_points() -> pl.DataFrame:
    """An empty frame with the canonical points schema."""
    df = pl.from_arrow(POINTS_SCHEMA.empty_table())
    assert isinstance(df, pl.DataFrame)
    return df


# ---- the other tables -------------------------------------------------------------------------


class RunCol(StrEnum):
    """Columns of the `runs` catalog."""

    RUN_ID = "run_id"
    REPO = "repo"
    BRANCH = "branch"
    HEAD_SHA = "head_sha"
    TITLE = "title"
    CREATED_AT = "created_at"
    STATUS = "status"
    CONCLUSION = "conclusion"
    HTML_URL = "html_url"
    SOURCE = "source"
    INGESTED_AT = "ingested_at"
    POINT_COUNT = "point_count"
    REJECT_COUNT = "reject_count"


RUNS_SCHEMA: pa.Schema = pa.schema(
    [
        pa.field(RunCol.RUN_ID, _S),
        pa.field(RunCol.REPO, _S),
        pa.field(RunCol.BRANCH, _S),
        pa.field(RunCol.HEAD_SHA, _S),
        pa.field(RunCol.TITLE, _S),
        pa.field(RunCol.CREATED_AT, _S),
        pa.field(RunCol.STATUS, _S),
        pa.field(RunCol.CONCLUSION, _S),
        pa.field(RunCol.HTML_URL, _S),
        pa.field(RunCol.SOURCE, _S),
        pa.field(RunCol.INGESTED_AT, pa.timestamp("us", tz="UTC")),
        pa.field(RunCol.POINT_COUNT, _I),
        pa.field(RunCol.REJECT_COUNT, _I),
    ]
)

RUN_DESCRIPTIONS: dict[RunCol, str] = {
    RunCol.RUN_ID: "run id (GitHub Actions run id or local name)",
    RunCol.REPO: "owner/name of the repository the run belongs to",
    RunCol.BRANCH: "head branch",
    RunCol.HEAD_SHA: "head commit sha",
    RunCol.TITLE: "run title (display_title)",
    RunCol.CREATED_AT: "creation time, ISO 8601 UTC",
    RunCol.STATUS: "GitHub status (queued, in_progress, completed) or 'local'",
    RunCol.CONCLUSION: "GitHub conclusion (success, failure, ...)",
    RunCol.HTML_URL: "link to the run",
    RunCol.SOURCE: "github, local, upload or runner",
    RunCol.INGESTED_AT: "last ingest into this run",
    RunCol.POINT_COUNT: "points stored for the run",
    RunCol.REJECT_COUNT: "rejected files and rows for the run",
}


class RejectCol(StrEnum):
    """Columns of the `rejects` table."""

    RUN_ID = "run_id"
    PATH = "path"
    SHA256 = "sha256"
    READER = "reader"
    FIELD = "field"
    REASON = "reason"
    AT = "at"
    OUTCOME = "outcome"


REJECTS_SCHEMA: pa.Schema = pa.schema(
    [
        pa.field(RejectCol.RUN_ID, _S),
        pa.field(RejectCol.PATH, _S),
        pa.field(RejectCol.SHA256, _S),
        pa.field(RejectCol.READER, _S),
        pa.field(RejectCol.FIELD, _S),
        pa.field(RejectCol.REASON, _S),
        pa.field(RejectCol.AT, pa.timestamp("us", tz="UTC")),
        pa.field(RejectCol.OUTCOME, _S),
    ]
)

REJECT_DESCRIPTIONS: dict[RejectCol, str] = {
    RejectCol.RUN_ID: "run the file was ingested into",
    RejectCol.PATH: "file (or file/row) that was not taken",
    RejectCol.SHA256: "sha256 of the file's bytes (empty if unreadable)",
    RejectCol.READER: "reader that tried it ('sniff' when no reader recognised it)",
    RejectCol.FIELD: "field that was wrong ('' for whole-file problems)",
    RejectCol.REASON: "what was wrong and what was expected",
    RejectCol.OUTCOME: "'rejected' (not taken: the reason says what to fix) or 'ignored' (a file "
    "that was recognised or read but holds nothing to store, with why); null in stores written "
    "before ignored files were recorded means rejected",
    RejectCol.AT: "when it was rejected",
}


class SeriesCol(StrEnum):
    """Columns of the server-metric `timeseries` table."""

    RUN_ID = "run_id"
    POINT_ID = "point_id"
    METRIC = "metric"
    LABELS = "labels"
    T = "t"
    VALUE = "value"


TIMESERIES_SCHEMA: pa.Schema = pa.schema(
    [
        pa.field(SeriesCol.RUN_ID, _S),
        pa.field(SeriesCol.POINT_ID, _S),
        pa.field(SeriesCol.METRIC, _S),
        pa.field(SeriesCol.LABELS, _S),
        pa.field(SeriesCol.T, _F),
        pa.field(SeriesCol.VALUE, _F),
    ]
)

SERIES_DESCRIPTIONS: dict[SeriesCol, str] = {
    SeriesCol.RUN_ID: "run of the point",
    SeriesCol.POINT_ID: "point the series belongs to",
    SeriesCol.METRIC: "server metric name, e.g. vllm:kv_cache_usage_perc, vllm:num_requests_running",
    SeriesCol.LABELS: "Prometheus labels as a JSON object",
    SeriesCol.T: "seconds since the start of the capture (s)",
    SeriesCol.VALUE: "sample value in the metric's own unit",
}
