"""The canonical column names (`Col`) and the shape of a column's description (`ColumnSpec`).

Everything in paretolens refers to columns through :class:`Col`, never through bare strings;
`ingest.contract.schema` re-exports these with the rest of the data contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

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
    FRAMEWORK_VERSION = "framework_version"
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
    MEASURED_ENERGY_J = "measured_energy_j"
    MEASURED_POWER_W = "measured_power_w"
    MEASURED_JOULES_PER_TOKEN = "measured_joules_per_token"
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

    name: Col | str  # a str only for a derived metric declared beyond `Col`
    dtype: pa.DataType
    unit: str
    description: str
    better: Better | None = None
    group: str = ""
