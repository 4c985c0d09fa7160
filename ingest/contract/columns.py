"""The points table's columns in order: what identifies a point and its configuration (here),
then what was measured (`ingest.contract.measured_columns`).

Part of the data contract (`ingest.contract.schema`, which re-exports `COLUMNS`).
"""

from __future__ import annotations

import pyarrow as pa

from ingest.contract.col import Col, ColumnSpec
from ingest.contract.measured_columns import MEASURED_COLUMNS

_S = pa.string()
_I = pa.int64()
_F = pa.float64()
_B = pa.bool_()

CONFIG_COLUMNS: tuple[ColumnSpec, ...] = (
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
)

COLUMNS: tuple[ColumnSpec, ...] = (*CONFIG_COLUMNS, *MEASURED_COLUMNS)
